package scenarios_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// classicFaultProxy passes a long-polling run through to the reference
// hub's classic side until the first send, then strikes every poll with
// fault: it answers it itself, or drops it.
func classicFaultProxy(t *testing.T, fault func(w http.ResponseWriter, r *http.Request) bool) scenarios.Endpoint {
	srv := hubtest.Start(t, hub.Options{})
	target, _ := url.Parse(srv.Origin())
	pass := httputil.NewSingleHostReverseProxy(target)
	pass.FlushInterval = -1
	var sending atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/send") {
			sending.Store(true)
		}
		if sending.Load() && fault(w, r) {
			return
		}
		pass.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return scenariostest.Classic(proxy.URL + "/signalr")
}

// A disconnect message (D) and a reconnect the hub refuses each end every
// connection of the run, which fails: D under the reason closed, the
// refused reconnect under transport (the reconnect's transport request).
func TestClassicDisconnectAndRefusedReconnectFailTheRun(t *testing.T) {
	cases := map[string]struct {
		fault           func(w http.ResponseWriter, r *http.Request) bool
		reason, errText string
	}{
		"disconnect": {func(w http.ResponseWriter, r *http.Request) bool {
			if !strings.HasSuffix(r.URL.Path, "/poll") {
				return false
			}
			fmt.Fprint(w, `{"C":"d","D":1,"M":[]}`)
			return true
		}, scenarios.FailClosed, "the server disconnected the connection"},
		"refused reconnect": {func(w http.ResponseWriter, r *http.Request) bool {
			switch {
			case strings.HasSuffix(r.URL.Path, "/reconnect"):
				http.Error(w, "Connection was disconnected.", http.StatusForbidden)
			case strings.HasSuffix(r.URL.Path, "/poll"):
				if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
					_ = conn.Close()
				}
			default:
				return false
			}
			return true
		}, scenarios.FailTransport, "reconnect: HTTP 403"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mc := matrixCases[0]
			o := runEndpoint(t, classicFaultProxy(t, tc.fault), mc.scenario("longpolling", "json"))
			if o.res.Outcome != scenarios.ResultFailure || !strings.Contains(o.res.Error, tc.errText) {
				t.Fatalf("outcome %s, error %q; want a failure saying %q", o.res.Outcome, o.res.Error, tc.errText)
			}
			if got := o.rec.Tally().Failed[tc.reason]; got != int64(mc.conns) {
				t.Errorf("connection_failures_total{reason=%s} = %v, want %d, one per connection", tc.reason, got, mc.conns)
			}
		})
	}
}
