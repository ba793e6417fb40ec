package statuspage

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure/monitor"
)

// The status page and status.json name each target's last Azure Monitor
// failure and the metrics the service said it does not have.
func TestStatusPageShowsServiceMetrics(t *testing.T) {
	failedAt := time.Date(2025, 3, 1, 12, 0, 5, 0, time.UTC)
	list := []monitor.Status{{
		Target: "wps", ResourceID: "/subscriptions/x/resourceGroups/rg/providers/Microsoft.SignalRService/WebPubSub/wps",
		LastRead: failedAt.Add(time.Minute), DataUntil: failedAt,
	}, {
		Target: "chat", ResourceID: "/subscriptions/x/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat",
		LastRead: failedAt, Failing: true, LastFailure: "forbidden: HTTP 403 AuthorizationFailed", LastFailureAt: failedAt,
		Dropped: []string{"ServerConnectionLatency", "UserErrors"},
	}}
	pg := routed(Options{ServiceMetrics: func() []monitor.Status { return list }})

	_, body := get(pg, "/")
	for _, want := range []string{"<h2>Azure Monitor</h2>", "forbidden: HTTP 403 AuthorizationFailed", "2025-03-01 12:00:05Z",
		"ServerConnectionLatency, UserErrors", `class="failure">failing`, `class="success">ok`} {
		if !strings.Contains(body, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	_, raw := get(pg, "/status.json")
	var st statusView
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.ServiceMetrics) != 2 || st.ServiceMetrics[0].Target != "chat" || !st.ServiceMetrics[0].Failing ||
		st.ServiceMetrics[0].LastFailure != "forbidden: HTTP 403 AuthorizationFailed" || st.ServiceMetrics[1].Failing {
		t.Errorf("status.json service_metrics %+v", st.ServiceMetrics)
	}
}

// Without readers the section is not shown.
func TestStatusPageWithoutServiceMetrics(t *testing.T) {
	pg := routed(Options{})
	if _, body := get(pg, "/"); strings.Contains(body, "Azure Monitor") {
		t.Error("Azure Monitor section without readers")
	}
}
