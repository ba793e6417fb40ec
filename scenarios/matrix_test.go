package scenarios_test

import (
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// matrixKey signs the embedded hub's emulated service in these tests.
const matrixKey = "matrix-test-access-key"

// serverlessEndpoint reaches srv's emulated service in serverless mode.
func serverlessEndpoint(t testing.TB, srv *hub.Server, apiVersion string) scenarios.Endpoint {
	t.Helper()
	cs, err := azure.ParseConnectionString(srv.ConnectionString())
	if err != nil {
		t.Fatal(err)
	}
	return scenariostest.Serverless(cs, apiVersion)
}

// wires are the transport and protocol pairs a scenario can use; the config
// refuses MessagePack over Server-Sent Events, which carry text only.
var wires = []struct{ transport, protocol string }{
	{"websockets", "json"}, {"websockets", "messagepack"},
	{"sse", "json"},
	{"longpolling", "json"}, {"longpolling", "messagepack"},
}

// matrixCase is one kind with the exact counts its small run must give.
type matrixCase struct {
	kind                  string
	conns, senders, group int
	batch                 int
	serverless            bool
	sent, expected        int64
}

// Every run sends 3 times per sender (300 ms at 100 ms intervals).
var matrixCases = []matrixCase{
	{kind: "echo", conns: 4, sent: 12, expected: 12},
	{kind: "broadcast", conns: 4, senders: 2, sent: 6, expected: 24},
	// Groups of 2, 2 and 1: 4 senders reach 2 members, 1 reaches 1.
	{kind: "send_to_group", conns: 5, group: 2, sent: 15, expected: 27},
	{kind: "send_to_client", conns: 4, sent: 12, expected: 12},
	{kind: "streaming_echo", conns: 3, sent: 9, expected: 9},
	{kind: "server_push", conns: 2, batch: 40, sent: 6, expected: 240},
	{kind: "rest_broadcast", conns: 3, senders: 2, serverless: true, sent: 6, expected: 18},
	{kind: "rest_send_to_user", conns: 4, serverless: true, sent: 12, expected: 12},
	{kind: "rest_send_to_group", conns: 5, group: 2, serverless: true, sent: 15, expected: 27},
}

func (mc matrixCase) scenario(transport, protocol string) config.Scenario {
	s := scenario(mc.kind, mc.conns, 300*time.Millisecond, 100*time.Millisecond)
	s.Transport, s.Protocol, s.Senders = transport, protocol, mc.senders
	s.GroupSize = max(mc.group, 1)
	s.BatchSize = max(mc.batch, 1)
	s.LossTimeout = 5 * time.Second // the drain ends as soon as all arrived
	return s
}

// Every kind over every transport and hub protocol delivers exactly what it
// sent, against the embedded hub (the REST kinds against its emulation of
// Azure SignalR Service, both REST API versions). The runs mostly wait, so
// all of them go at once, whatever -parallel says.
func TestEveryKindOverEveryTransportAndProtocol(t *testing.T) {
	srv := hubtest.Start(t, hub.Options{AccessKey: matrixKey})
	var wg sync.WaitGroup
	for _, mc := range matrixCases {
		for i, w := range wires {
			ep := scenariostest.SignalR(srv.URL())
			if mc.serverless {
				ep = serverlessEndpoint(t, srv, []string{azure.RESTAPIV1, azure.RESTAPI20220601}[i%2])
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(mc.kind+"/"+w.transport+"/"+w.protocol, func(t *testing.T) {
					o := runEndpoint(t, ep, mc.scenario(w.transport, w.protocol))
					assertCounts(t, o, mc.sent, mc.expected)
					mc.checkExtras(t, o)
				})
			}()
		}
	}
	wg.Wait()
}

// checkExtras pins what only some kinds report: REST responses, batches.
func (mc matrixCase) checkExtras(t *testing.T, o runOutcome) {
	t.Helper()
	if mc.serverless {
		if got := o.rec.Tally().HTTP[scenariostest.HTTPResponse{Endpoint: "rest", Code: 202}]; got != int64(mc.sent) {
			t.Errorf("http_requests_total{endpoint=rest,code=202} = %v, want one per send (%d)", got, mc.sent)
		}
	}
	if mc.kind == "rest_send_to_group" {
		if got := o.rec.Tally().HTTP[scenariostest.HTTPResponse{Endpoint: "rest", Code: 200}]; got != int64(mc.conns) {
			t.Errorf("http_requests_total{endpoint=rest,code=200} = %v, want one group add per connection (%d)", got, mc.conns)
		}
	}
	if mc.kind != "server_push" {
		return
	}
	r := o.res
	if r.Batches != mc.sent {
		t.Errorf("batches = %d, want one per request (%d)", r.Batches, mc.sent)
	}
	if b := r.BatchLatency; b.P50 <= 0 || b.Max < b.P50 || b.Max > r.Latency.Max+time.Millisecond {
		t.Errorf("time to last message %+v: want 0 < p50 ≤ max ≤ the slowest message %v", b, r.Latency.Max)
	}
}
