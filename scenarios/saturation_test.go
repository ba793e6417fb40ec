package scenarios_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/runreport"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// A run whose sends the probe cannot make on schedule (each REST send
// takes 400 ms, the schedule wants one every 100 ms) is inconclusive, not a
// pass and not the hub's failure: the report says the probe was saturated
// and what it really sent, and run_success is 0.
func TestSaturatedProbeIsInconclusive(t *testing.T) {
	t.Parallel()
	srv := hubtest.Start(t, hub.Options{AccessKey: matrixKey})
	front := newSlowFront(t, srv.Origin(), 400*time.Millisecond)
	cs, err := azure.ParseConnectionString(srv.ConnectionString() + "ServerEndpoint=" + front.URL + ";")
	if err != nil {
		t.Fatal(err)
	}
	ep := scenariostest.Serverless(cs, "")
	s := scenario("rest_broadcast", 1, time.Second, 100*time.Millisecond)
	s.MaxSendLag = config.DefaultScenario.MaxSendLag
	o := runEndpoint(t, ep, s)
	r := o.res
	if r.Outcome != scenarios.ResultInconclusive || r.MetSLO() {
		t.Fatalf("outcome %q (%s), want inconclusive and not a pass", r.Outcome, r.Error)
	}
	if r.Scheduled != 10 || r.Unsent < 1 || r.Sent+r.Unsent != 10 || r.Lost != 0 {
		t.Errorf("scheduled %d, sent %d, unsent %d, lost %d: want 10 scheduled, each sent or unsent, none lost",
			r.Scheduled, r.Sent, r.Unsent, r.Lost)
	}
	want := regexp.MustCompile(`^probe saturated: send lag p99 \d+ms \(bound 100ms\); sent (\d+) of 10 scheduled sends, [0-9.]+/s of [0-9.]+/s$`)
	if m := want.FindStringSubmatch(r.Error); len(m) < 2 || m[1] != strconv.FormatInt(r.Sent, 10) {
		t.Errorf("error %q, want the saturation and the %d sends really made", r.Error, r.Sent)
	}
	var text strings.Builder
	_ = runreport.WriteText(&text, r)
	if !strings.Contains(text.String(), "Result: INCONCLUSIVE: probe saturated") {
		t.Errorf("report does not say the probe was saturated:\n%s", text.String())
	}
}

// newSlowFront forwards every request to origin after delay, like a REST
// endpoint that is slow to answer.
func newSlowFront(t *testing.T, origin string, delay time.Duration) *httptest.Server {
	t.Helper()
	return newDelayingFront(t, origin, func(int64) time.Duration { return delay })
}

// newDelayingFront forwards request n (counted from 0) to origin after
// delay(n).
func newDelayingFront(t *testing.T, origin string, delay func(n int64) time.Duration) *httptest.Server {
	t.Helper()
	target, err := url.Parse(origin)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay(requests.Add(1) - 1))
		r.Host = target.Host // tokens name the hub's address
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A run whose window closes with sends still unmade is inconclusive even
// when every send it made went out on time, its send lag p99 well within
// max_send_lag: the REST send due at 700 ms takes 1 s to answer, and once
// the window and max_send_lag (1.3 s) have passed, the pacer gives up the
// two sends due after it rather than firing them late.
func TestUnmadeSendsMakeARunInconclusiveWhateverTheLag(t *testing.T) {
	t.Parallel()
	srv := hubtest.Start(t, hub.Options{AccessKey: matrixKey})
	front := newDelayingFront(t, srv.Origin(), func(n int64) time.Duration {
		if n == 7 {
			return time.Second
		}
		return 0
	})
	cs, err := azure.ParseConnectionString(srv.ConnectionString() + "ServerEndpoint=" + front.URL + ";")
	if err != nil {
		t.Fatal(err)
	}
	ep := scenariostest.Serverless(cs, "")
	s := scenario("rest_broadcast", 1, time.Second, 100*time.Millisecond)
	s.MaxSendLag = 300 * time.Millisecond
	o := runEndpoint(t, ep, s)
	r := o.res
	if r.Scheduled != 10 || r.Sent != 8 || r.Unsent != 2 || r.Received != 8 || r.Lost != 0 {
		t.Fatalf("scheduled %d, sent %d, unsent %d, received %d, lost %d: want 10, 8, 2, 8, 0",
			r.Scheduled, r.Sent, r.Unsent, r.Received, r.Lost)
	}
	if r.SendLag.P99 > s.MaxSendLag {
		t.Fatalf("send lag p99 %v over max_send_lag %v: this machine is too busy for the test to show the unmade sends alone", r.SendLag.P99, s.MaxSendLag)
	}
	want := regexp.MustCompile(`^probe saturated: send lag p99 \d+m?s \(bound 300ms\); sent 8 of 10 scheduled sends, [0-9.]+/s of [0-9.]+/s$`)
	if r.Outcome != scenarios.ResultInconclusive || r.MetSLO() || !want.MatchString(r.Error) {
		t.Errorf("outcome %q (%s), want inconclusive, saying 8 of 10 sends were made", r.Outcome, r.Error)
	}
}

// A send the hub refuses without throttling (a REST 500) fails the run
// with that send's error; the sender stops, and nothing it sent is lost.
func TestRefusedSendFailsTheRun(t *testing.T) {
	t.Parallel()
	srv := hubtest.Start(t, hub.Options{AccessKey: matrixKey})
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	cs, err := azure.ParseConnectionString(srv.ConnectionString() + "ServerEndpoint=" + failing.URL + ";")
	if err != nil {
		t.Fatal(err)
	}
	ep := scenariostest.Serverless(cs, "")
	o := runEndpoint(t, ep, scenario("rest_broadcast", 1, 300*time.Millisecond, 100*time.Millisecond))
	r := o.res
	if r.Outcome != scenarios.ResultFailure || !strings.HasPrefix(r.Error, "send from connection 0: ") || !strings.Contains(r.Error, "HTTP 500") ||
		r.Sent != 0 || r.Lost != 0 {
		t.Errorf("outcome %s (%s), sent %d, lost %d; want a failure naming the refused send, nothing sent or lost", r.Outcome, r.Error, r.Sent, r.Lost)
	}
	checkCount(t, "REST responses 500", o.rec.Tally().HTTP[scenariostest.HTTPResponse{Endpoint: "rest", Code: 500}], 1)
}
