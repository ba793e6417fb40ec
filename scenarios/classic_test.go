package scenarios_test

import (
	"sync"
	"testing"

	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
)

// classicEndpoint reaches srv's classic ASP.NET SignalR side, the
// benchmark's Signalrbench hub at /signalr.
func classicEndpoint(srv *hub.Server) scenarios.Endpoint {
	return scenarios.Endpoint{URL: srv.Origin() + "/signalr", AspNetHub: "Signalrbench"}
}

var classicTransports = []string{"websockets", "sse", "longpolling", "foreverframe"}

// The hub-method kinds run on classic ASP.NET SignalR too, over all four
// of its transports, and deliver exactly what they sent; every connection
// measures its round trip.
func TestClassicKindsOverEveryTransport(t *testing.T) {
	srv := hubtest.Start(t, hub.Options{})
	var wg sync.WaitGroup
	for _, mc := range matrixCases[:4] {
		for _, transport := range classicTransports {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(mc.kind+"/"+transport, func(t *testing.T) {
					o := runEndpoint(t, classicEndpoint(srv), mc.scenario(transport, "json"))
					assertCounts(t, o, mc.sent, mc.expected)
					if o.res.RoundTrips < int64(mc.conns) {
						t.Errorf("%d round trips measured, want one per connection at least (%d)", o.res.RoundTrips, mc.conns)
					}
				})
			}()
		}
	}
	wg.Wait()
}
