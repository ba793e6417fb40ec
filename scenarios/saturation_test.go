package scenarios_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
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
	ep := scenarios.Endpoint{Serverless: &scenarios.Serverless{ConnectionString: cs, Hub: config.EmbeddedHubName}}
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
	if m := want.FindStringSubmatch(r.Error); m == nil || m[1] != strconv.FormatInt(r.Sent, 10) {
		t.Errorf("error %q, want the saturation and the %d sends really made", r.Error, r.Sent)
	}
	checkCounter(t, o.reg, 0, "hubprobe_run_success")
	checkCounter(t, o.reg, 1, "hubprobe_runs_total", "result", "inconclusive")
	var text strings.Builder
	_ = r.WriteText(&text)
	if !strings.Contains(text.String(), "Result: INCONCLUSIVE: probe saturated") {
		t.Errorf("report does not say the probe was saturated:\n%s", text.String())
	}
}

// newSlowFront forwards every request to origin after delay, like a REST
// endpoint that is slow to answer.
func newSlowFront(t *testing.T, origin string, delay time.Duration) *httptest.Server {
	t.Helper()
	target, err := url.Parse(origin)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		r.Host = target.Host // tokens name the hub's address
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}
