package hub_test

import (
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsExported(t *testing.T) {
	_, srv, reg := startHub(t, hub.Options{})
	a := wiretest.Connect(t, srv)
	b := wiretest.Connect(t, srv)
	a.Send(`{"type":6}`)
	a.Send(`{"type":1,"invocationId":"1","target":"Echo","arguments":[{}]}`)
	a.NextNonPingRecord() // RecordLatency
	a.NextNonPingRecord() // Completion
	b.WS.Close()
	wiretest.WaitFor(t, "b to be gone", func() bool { return metricValue(t, reg, "hubprobe_hub_connections") == 1 })

	want := `
# HELP hubprobe_hub_connections Client connections of the embedded hub that completed the handshake and are open.
# TYPE hubprobe_hub_connections gauge
hubprobe_hub_connections 1
# HELP hubprobe_hub_event_handler_requests_total Requests the embedded hub's Web PubSub emulation sent to its event handler, by request (validate, event) and result (ok, refused, error).
# TYPE hubprobe_hub_event_handler_requests_total counter
hubprobe_hub_event_handler_requests_total{request="event",result="error"} 0
hubprobe_hub_event_handler_requests_total{request="event",result="ok"} 0
hubprobe_hub_event_handler_requests_total{request="event",result="refused"} 0
hubprobe_hub_event_handler_requests_total{request="validate",result="error"} 0
hubprobe_hub_event_handler_requests_total{request="validate",result="ok"} 0
hubprobe_hub_event_handler_requests_total{request="validate",result="refused"} 0
# HELP hubprobe_hub_messages_received_total Hub protocol messages the embedded hub received from clients, pings included.
# TYPE hubprobe_hub_messages_received_total counter
hubprobe_hub_messages_received_total 2
# HELP hubprobe_hub_messages_sent_total Hub protocol messages the embedded hub wrote to clients (a broadcast counts once per receiver), pings included.
# TYPE hubprobe_hub_messages_sent_total counter
hubprobe_hub_messages_sent_total 4
# HELP hubprobe_hub_panics_total Panics recovered in the embedded hub; each closed the connection it happened on.
# TYPE hubprobe_hub_panics_total counter
hubprobe_hub_panics_total 0
# HELP hubprobe_hub_throttled_total Requests and connections the embedded hub refused or closed for its connection quota or message rate limit.
# TYPE hubprobe_hub_throttled_total counter
hubprobe_hub_throttled_total{reason="connection_limit"} 0
hubprobe_hub_throttled_total{reason="message_limit"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
}

func TestNewFailsOnDuplicateRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	h, err := hub.New(hub.Options{}, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := hub.New(hub.Options{}, reg); err == nil {
		t.Fatal("second hub on the same registry: want an error")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []hub.Options{
		{Path: "nope"},
		{MaxMessageSize: -1},
		{ClientTimeout: -1},
		{SendQueueSize: -5},
	} {
		if h, err := hub.New(o, nil); err == nil {
			h.Close()
			t.Errorf("hub.New(%+v): want an error", o)
		}
	}
}
