package statuspage

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Every kept run has a page at /runs/{run_id}, linked from the status
// page and named in status.json: its figures, its failures in full,
// escaped, and the report hubprobe run prints. A run no longer kept is 404.
func TestRunPage(t *testing.T) {
	pg, _ := statusServer(t, 100, 1)
	code, page := get(pg, "/runs/r1")
	if code != http.StatusOK {
		t.Fatalf("GET /runs/r1: %d\n%s", code, page)
	}
	for _, want := range []string{
		"Run r1", "hub-a", "echo-ws (echo)", "failure", templateEscaped(failedRun().Error),
		"Messages: sent 10, expected 10, received 9, lost 1", "Where the time goes:", "Result: FAILED: ",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, failedRun().Error) {
		t.Error("run page holds the raw, unescaped error text")
	}
	if _, status := get(pg, "/"); !strings.Contains(status, `<a href="runs/r1">`) {
		t.Error("status page does not link the run's page")
	}
	_, raw := get(pg, "/status.json")
	var st statusView
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		t.Fatal(err)
	}
	if r := st.Scenarios[1].LastRun; r == nil || r.RunID != "r1" || r.URL != "runs/r1" {
		t.Errorf("status.json last run of echo-ws = %+v, want run_id r1 at runs/r1", r)
	}
	if code, _ := get(pg, "/runs/gone"); code != http.StatusNotFound {
		t.Errorf("GET /runs/gone: %d, want 404", code)
	}
}
