package scenarios_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
	"github.com/hubprobe/hubprobe/scenarios/wire/classicwire"
)

// classicEndpoint reaches srv's classic ASP.NET SignalR side, the
// benchmark's Signalrbench hub at /signalr.
func classicEndpoint(srv *hub.Server) scenarios.Endpoint {
	return scenariostest.Classic(srv.Origin() + "/signalr")
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

// An embedded classic target resolves to the embedded hub's /signalr and
// the benchmark's hub name, and its echo runs there over Forever Frame.
func TestEmbeddedClassicTargetResolvesAndRuns(t *testing.T) {
	target := config.Target{Name: "classic", Service: config.ServiceAspNetSignalR, Embedded: true, Hub: config.AspNetHubName}
	cfg := resolveConfig(target)
	cfg.Scenarios[0].Transport = config.TransportForeverFrame
	r, hubs := newResolver(t, cfg)
	jobs, err := r.Jobs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := hubs.URL("classic")
	ep := jobs[0].Runner.Endpoint
	w, ok := ep.Wire.(classicwire.Wire)
	if want := strings.TrimSuffix(base, hub.DefaultPath) + config.EmbeddedAspNetPath; !ok || w.Target.URL != want || w.Target.Hub != "Signalrbench" {
		t.Fatalf("endpoint %+v, want the classic wire to %q Signalrbench", ep.Wire, want)
	}
	s := matrixCases[0].scenario(config.TransportForeverFrame, "json")
	assertCounts(t, runEndpoint(t, ep, s), matrixCases[0].sent, matrixCases[0].expected)
}

// classicFaultServer answers negotiate with body and, for a Forever
// Frame connect, sends the page's headers and then nothing.
func classicFaultServer(t *testing.T, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/negotiate"):
			fmt.Fprint(w, body)
		case strings.HasSuffix(r.URL.Path, "/connect"):
			w.Header().Set("Content-Type", "text/html")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/signalr"
}

// A classic hub's faults fail the run, each counted under its reason.
func TestClassicFaultsFailTheRunWithTheirReason(t *testing.T) {
	offer := `{"Url":"/signalr","ConnectionToken":"t","ConnectionId":"i","KeepAliveTimeout":20.0,"DisconnectTimeout":30.0,"ConnectionTimeout":110.0,"TryWebSockets":true,"ProtocolVersion":"2.0"}`
	cases := map[string]struct{ body, reason, errText string }{
		"bad negotiate JSON": {`{"Url":`, scenarios.FailNegotiate, "invalid negotiate answer"},
		"protocol version":   {strings.Replace(offer, `"2.0"`, `"3.0"`, 1), scenarios.FailNegotiate, "unsupported protocol version"},
		"stalled frame":      {offer, scenarios.FailTimeout, "no init message"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := matrixCases[0].scenario(config.TransportForeverFrame, "json")
			s.Connections, s.ConnectTimeout = 2, 500*time.Millisecond
			o := runEndpoint(t, scenariostest.Classic(classicFaultServer(t, tc.body)), s)
			if o.res.Outcome != scenarios.ResultFailure || !strings.Contains(o.res.Error, tc.errText) {
				t.Fatalf("outcome %s, error %q; want a failure saying %q", o.res.Outcome, o.res.Error, tc.errText)
			}
			if got := o.rec.Tally().Failed[tc.reason]; got != 2 {
				t.Errorf("connection_failures_total{reason=%s} = %v, want 2", tc.reason, got)
			}
		})
	}
}

// An app server in Azure SignalR Service's ASP.NET mode redirects
// negotiate to the service's /aspnetclient with a token; the classic kinds
// follow it and run there (Forever Frame falls back, as it cannot carry
// the token).
func TestClassicKindsFollowTheASPNetModeRedirect(t *testing.T) {
	srv := hubtest.Start(t, hub.Options{AccessKey: matrixKey, RedirectNegotiate: true})
	for _, transport := range []string{"websockets", "longpolling"} {
		t.Run(transport, func(t *testing.T) {
			s := matrixCases[2].scenario(config.TransportForeverFrame, "json")
			s.FallbackTransports = []string{transport}
			o := runEndpoint(t, classicEndpoint(srv), s)
			assertCounts(t, o, matrixCases[2].sent, matrixCases[2].expected)
			if got := o.rec.Tally().Passed[clientconn.PhaseRedirect]; got != int64(matrixCases[2].conns) {
				t.Errorf("%v connects passed the redirect phase, want %d", got, matrixCases[2].conns)
			}
			if n := o.rec.Tally().Requests("foreverframe"); n != 0 {
				t.Errorf("%d Forever Frame requests after the redirect, want none", n)
			}
		})
	}
}
