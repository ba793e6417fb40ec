package monitor_test

import (
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure/monitor"
	"github.com/hubprobe/hubprobe/azure/monitortest"
	"github.com/hubprobe/hubprobe/internal/localtest"
)

// A 403 (no Monitoring Reader role) counts once as forbidden, and the
// status names the status and Azure's error code, never the token.
func TestReaderCountsAForbiddenRead(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	serveSignalRUsage(g)
	g.srv.Respond(monitortest.Answer{Status: http.StatusForbidden, Body: `{"error":{"code":"AuthorizationFailed",` +
		`"message":"The client does not have authorization to perform action 'microsoft.insights/metrics/read'."}}`})
	r := g.start(t, nil)
	g.waitReads(t, 1, 10*time.Second)
	if n := g.value(t, "hubprobe_service_metrics_read_failures_total", monitor.ReasonForbidden, target); n != 1 {
		t.Errorf("forbidden %v, want 1", n)
	}
	st := r.Status()
	if !st.Failing || st.LastFailure != "forbidden: HTTP 403 AuthorizationFailed" {
		t.Errorf("status %+v", st)
	}
	bearer := g.srv.Requests()[0].Bearer
	if bearer == "" || strings.Contains(st.LastFailure, bearer) {
		t.Errorf("status %q holds the token", st.LastFailure)
	}
	if s := g.series(t, "hubprobe_service_connections"); len(s) != 0 || !isNaN(r.ServerLoad()) {
		t.Errorf("values without a read: %v, server load %v", s, r.ServerLoad())
	}
}

// After a 429 with Retry-After the reader asks once when the wait is
// over, not before and not in a burst.
func TestReaderWaitsForRetryAfter(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	serveSignalRUsage(g)
	g.srv.Respond(monitortest.Answer{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}},
		Body: `{"error":{"code":"TooManyRequests","message":"Rate limit exceeded."}}`})
	r := g.start(t, func(o *monitor.Options) { o.Interval = 100 * time.Millisecond })
	g.waitReads(t, 2, 10*time.Second)
	reqs := g.srv.Requests()
	gap := reqs[1].At.Sub(reqs[0].At)
	if reqs[0].Status != http.StatusTooManyRequests || reqs[1].Status != http.StatusOK || gap < time.Second || gap > 1500*time.Millisecond {
		t.Errorf("requests %d then %d, %s apart; want 429, then 200 one Retry-After (1s) later", reqs[0].Status, reqs[1].Status, gap)
	}
	if n := g.value(t, "hubprobe_service_metrics_read_failures_total", monitor.ReasonThrottled, target); n != 1 {
		t.Errorf("throttled %v, want 1", n)
	}
	if st := r.Status(); st.Failing || st.LastFailure != "throttled: HTTP 429 TooManyRequests, Retry-After 1s" {
		t.Errorf("status %+v", st)
	}
}

// A 529 without Retry-After backs off: the next request comes no sooner
// than the backoff's draw (with jitter 1, twice the interval).
func TestReaderBacksOffAfterAnOverloadedService(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	serveSignalRUsage(g)
	g.srv.Respond(monitortest.Answer{Status: 529, Body: `{"code":"ServerBusy","message":"The server is busy."}`})
	interval := 200 * time.Millisecond
	g.start(t, func(o *monitor.Options) { o.Interval, o.Jitter = interval, func() float64 { return 1 } })
	g.waitReads(t, 2, 10*time.Second)
	reqs := g.srv.Requests()
	if gap := reqs[1].At.Sub(reqs[0].At); gap < 2*interval {
		t.Errorf("second request %s after the 529, want at least %s", gap, 2*interval)
	}
	if n := g.value(t, "hubprobe_service_metrics_read_failures_total", monitor.ReasonThrottled, target); n != 1 {
		t.Errorf("throttled %v, want 1", n)
	}
}

// A metric the resource does not have fails the read with 400; it is
// named, counted, left out of the next query, and the reads go on.
func TestReaderDropsAMetricAzureDoesNotKnow(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	serveSignalRUsage(g)
	g.srv.Remove(g.id, "ServerConnectionLatency")
	r := g.start(t, func(o *monitor.Options) { o.Interval = 100 * time.Millisecond })
	g.waitReads(t, 2, 10*time.Second)
	reqs := g.srv.Requests()
	if reqs[0].Status != http.StatusBadRequest || reqs[1].Status != http.StatusOK || strings.Contains(reqs[1].Query["metricnames"], "ServerConnectionLatency") {
		t.Fatalf("requests: %d, then %d asking %s", reqs[0].Status, reqs[1].Status, reqs[1].Query["metricnames"])
	}
	if n := g.value(t, "hubprobe_service_metrics_read_failures_total", monitor.ReasonUnknownMetric, target); n != 1 {
		t.Errorf("unknown_metric %v, want 1", n)
	}
	st := r.Status()
	if len(st.Dropped) != 1 || st.Dropped[0] != "ServerConnectionLatency" || !strings.Contains(st.LastFailure, "no metric ServerConnectionLatency") {
		t.Errorf("status %+v", st)
	}
	if s := g.series(t, "hubprobe_service_server_connection_latency_seconds"); len(s) != 0 {
		t.Errorf("%v exported", s)
	}
	if v := g.value(t, "hubprobe_service_connections", target); v != 850 {
		t.Errorf("connections %v after the metric was dropped, want 850", v)
	}
}

// A metric without data is named and counted, and its series left out
// rather than reported as 0; the others are read.
func TestReaderOmitsAnEmptySeries(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	serveSignalRUsage(g)
	g.srv.Clear(g.id, "ServerLoad")
	g.srv.Clear(g.id, "InboundTraffic")
	r := g.start(t, nil)
	g.waitReads(t, 1, 10*time.Second)
	if n := g.value(t, "hubprobe_service_metrics_read_failures_total", monitor.ReasonEmptySeries, target); n != 1 {
		t.Errorf("empty_series %v, want 1", n)
	}
	if s := g.series(t, "hubprobe_service_inbound_bytes_per_second"); len(s) != 0 || !isNaN(r.ServerLoad()) {
		t.Errorf("empty metrics reported: %v, server load %v", s, r.ServerLoad())
	}
	if v := g.value(t, "hubprobe_service_outbound_bytes_per_second", target); v != 40000 {
		t.Errorf("outbound %v, want 40000", v)
	}
	if st := r.Status(); st.LastFailure != "empty_series: no value for ServerLoad, InboundTraffic" {
		t.Errorf("status %+v", st)
	}
}

// Azure publishes a minute a few minutes late: the newest value that is
// there counts, and its age says how late it is.
func TestReaderKeepsTheNewestValueThatIsThere(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	serveSignalRUsage(g)
	g.srv.Lag(g.id, 3)
	r := g.start(t, nil)
	g.waitReads(t, 1, 10*time.Second)
	if r.ServerLoad() != 0.75 || g.value(t, "hubprobe_service_metrics_read_failures_total", monitor.ReasonEmptySeries, target) != 0 {
		t.Errorf("server load %v with three minutes not yet published", r.ServerLoad())
	}
	if age := g.value(t, "hubprobe_service_metrics_age_seconds", target); age < 180 || age > 241 {
		t.Errorf("age %vs, want three to four minutes", age)
	}
}

func TestReaderClassifiesFailures(t *testing.T) {
	cases := []struct {
		name, reason, failure string
		answer                monitortest.Answer
	}{
		{"not found", monitor.ReasonNotFound, "not_found: HTTP 404 ResourceNotFound",
			monitortest.Answer{Status: 404, Body: `{"error":{"code":"ResourceNotFound","message":"The Resource was not found."}}`}},
		{"token refused", monitor.ReasonAuth, "auth: HTTP 401 InvalidAuthenticationToken",
			monitortest.Answer{Status: 401, Body: `{"error":{"code":"InvalidAuthenticationToken","message":"The access token is invalid."}}`}},
		{"not JSON", monitor.ReasonBadResponse, "bad_response: HTTP 200 with a body that is not the metrics API's JSON",
			monitortest.Answer{Status: 200, Body: `<html>proxy</html>`}},
		{"server error", monitor.ReasonBadResponse, "bad_response: HTTP 500 InternalServerError",
			monitortest.Answer{Status: 500, Body: `{"error":{"code":"InternalServerError","message":"x"}}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newRig(t, monitortest.SignalR)
			g.srv.Respond(c.answer)
			r := g.start(t, nil)
			g.waitReads(t, 1, 10*time.Second)
			if n := g.value(t, "hubprobe_service_metrics_read_failures_total", c.reason, target); n != 1 {
				t.Errorf("%s %v, want 1", c.reason, n)
			}
			if st := r.Status(); st.LastFailure != c.failure {
				t.Errorf("failure %q, want %q", st.LastFailure, c.failure)
			}
		})
	}
}

// Nothing listens at the endpoint: a network failure, named without the
// request's URL.
func TestReaderCountsANetworkFailure(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	closed := localtest.Server(t, http.NotFoundHandler())
	addr := closed.Listener.Addr().String()
	closed.Close()
	r := g.start(t, func(o *monitor.Options) { o.Endpoint = "https://" + addr })
	g.waitReads(t, 1, 10*time.Second)
	if n := g.value(t, "hubprobe_service_metrics_read_failures_total", monitor.ReasonNetwork, target); n != 1 {
		t.Errorf("network %v, want 1", n)
	}
	if st := r.Status(); !strings.HasPrefix(st.LastFailure, "network: Get: ") || strings.Contains(st.LastFailure, "subscriptions") {
		t.Errorf("failure %q", st.LastFailure)
	}
}

// The credential cannot sign in (the identity endpoint refuses it): auth,
// with no request to Azure Monitor at all.
func TestReaderCountsASignInFailure(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	r := g.start(t, func(*monitor.Options) { t.Setenv("IDENTITY_HEADER", "not-the-header") })
	g.waitReads(t, 1, 10*time.Second)
	if n := g.value(t, "hubprobe_service_metrics_read_failures_total", monitor.ReasonAuth, target); n != 1 {
		t.Errorf("auth %v, want 1", n)
	}
	if st := r.Status(); st.LastFailure != "auth: sign-in failed: HTTP 400" || len(g.srv.Requests()) != 0 {
		t.Errorf("failure %q, %d requests", st.LastFailure, len(g.srv.Requests()))
	}
}

// Stop ends the reading goroutine, and the values leave the metrics.
func TestReaderStopLeavesNothingRunning(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	serveSignalRUsage(g)
	cred := g.srv.ManagedIdentityCredential(t)
	before := runtime.NumGoroutine()
	id, _ := monitor.ParseResourceID(g.id)
	r, err := monitor.Start(t.Context(), monitor.Options{Target: target, Resource: id, Endpoint: g.srv.URL,
		Credential: cred, Transport: g.srv.Client}, g.m)
	if err != nil {
		t.Fatal(err)
	}
	g.waitReads(t, 1, 10*time.Second)
	r.Stop()
	g.srv.CloseIdleConnections()
	localtest.CheckNoLeak(t, before)
	if s := g.series(t, "hubprobe_service_connections"); len(s) != 0 {
		t.Errorf("%v still exported after Stop", s)
	}
}

func isNaN(f float64) bool { return f != f }
