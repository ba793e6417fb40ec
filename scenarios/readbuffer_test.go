package scenarios_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// largestMessage is a Recorder that keeps the largest transport message a
// run received.
type largestMessage struct {
	scenarios.Recorder // the rest is discarded
	mu                 sync.Mutex
	largest            int
}

func (r *largestMessage) BytesReceived(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.largest = max(r.largest, n)
}

// The reference hub's messages of the hub-method kinds at the default
// message size, on the Core and the classic wire, fit with their frame
// header the WebSocket read buffer every connection holds (2,213 to 2,299
// bytes in 2,684): the buffer is sized so, because each message that does
// not fit costs the probe one more read.
func TestDefaultSizeMessagesFitTheReadBuffer(t *testing.T) {
	t.Parallel()
	srv := hubtest.Start(t, hub.Options{})
	const header = 4 // a server's frame of 126 to 65,535 bytes
	for wire, ep := range map[string]scenarios.Endpoint{"core": scenariostest.SignalR(srv.URL()), "classic": classicEndpoint(srv)} {
		for _, mc := range matrixCases[:4] {
			s := mc.scenario(signalrclient.TransportWebSockets, "json")
			// Groups of one: the classic hub sends a member every message
			// of the group that is due in one envelope.
			s.MessageSize, s.GroupSize = config.DefaultScenario.MessageSize, 1
			// Sends at least 100 ms apart, in passes of their own: a
			// broadcast's sends made in one pass reach every connection
			// together, and the hub writes them in one frame.
			s.SendInterval = time.Duration(max(s.Connections, 2)) * 100 * time.Millisecond
			largest := largestMessageOf(t, ep, s, wire)
			if largest < s.MessageSize || largest+header > clientconn.WebSocketReadBufferSize {
				t.Errorf("%s on the %s wire: a %d-byte message gets a %d-byte answer; the read buffer holds %d bytes with the header",
					mc.kind, wire, s.MessageSize, largest, clientconn.WebSocketReadBufferSize-header)
			}
		}
	}
}

// largestMessageOf runs s against ep and returns the largest message its
// connections received.
func largestMessageOf(t *testing.T, ep scenarios.Endpoint, s config.Scenario, wire string) int {
	t.Helper()
	rec := &largestMessage{Recorder: scenarios.Discard}
	runner := &scenarios.Runner{Scenario: s, Endpoint: ep, Recorder: rec}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if res := runner.Run(ctx); res.Outcome != scenarios.ResultSuccess || res.Received == 0 {
		t.Fatalf("%s on the %s wire: outcome %s (%s), %d received; want success", s.Kind, wire, res.Outcome, res.Error, res.Received)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.largest
}
