package statuspage

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
)

var runStart = time.Unix(1700000000, 0)

// run is the i-th run of scenario of hub-a, a minute after the one
// before; a failed one says which it was.
func run(scenario, outcome string, i int) scenarios.Result {
	r := scenarios.Result{
		Target: "hub-a", Scenario: scenario, Kind: "echo", Outcome: outcome,
		Start: runStart.Add(time.Duration(i) * time.Minute), Duration: time.Second,
	}
	if outcome == scenarios.ResultFailure {
		r.Error = "run " + strconv.Itoa(i) + " failed"
	}
	return r
}

// failedRun is a run of echo-ws that lost one of its ten messages and
// whose error text needs escaping.
func failedRun() scenarios.Result {
	r := run("echo-ws", scenarios.ResultFailure, 0)
	r.RunID, r.Duration = "r1", 5*time.Second
	r.Connections, r.Sent, r.Expected, r.Received, r.Lost, r.SlowMessages = 2, 10, 10, 9, 1, 1
	r.Latency = scenarios.Quantiles{P50: 90 * time.Millisecond, P90: 700 * time.Millisecond, P99: 1200 * time.Millisecond, Max: 1200 * time.Millisecond}
	r.Error = `1 of 10 messages lost; server said <closed> & "throttled"`
	return r
}

// routed is a mux with the pages alone, as the daemon mounts them.
func routed(o Options) http.Handler {
	mux := http.NewServeMux()
	for pattern, h := range Routes(o) {
		mux.Handle(pattern, h)
	}
	return mux
}

// ask sends h a GET of path and returns the answer.
func ask(h http.Handler, path string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w
}

// get is ask's status code and body.
func get(h http.Handler, path string) (int, string) {
	w := ask(h, path)
	return w.Code, w.Body.String()
}

// templateEscaped is how html/template writes text content: it escapes
// quotes as numeric references.
func templateEscaped(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}
