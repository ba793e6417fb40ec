package scenarios_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
	"github.com/hubprobe/hubprobe/throttle"
)

// A hub whose connection quota (2) is below the scenario's connections (4)
// throttles every scheduled run: each one counts two connection_limit
// throttles, fails with the reason on the status page, and the next run
// still comes on schedule.
func TestConnectionQuotaFailsEveryScheduledRun(t *testing.T) {
	t.Parallel()
	srv := hubtest.Start(t, hub.Options{ConnectionQuota: 2})
	f := newSchedulerFixture(t, srv.URL())
	s := scenario("echo", 4, 200*time.Millisecond, 100*time.Millisecond)
	s.Schedule, s.Timeout, s.ConnectTimeout = "@every 1s", 3*time.Second, 2*time.Second
	if err := f.Sched.Apply(oneJob(f.Rec, f.URL, s), false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, func() bool { return len(f.Results.All()) >= 3 })
	stopBounded(t, f.Sched)

	runs, rec := f.Results.All(), f.Rec
	sort.Slice(runs, func(i, j int) bool { return runs[i].Start.Before(runs[j].Start) })
	throttles := checkQuotaRuns(t, runs)
	if got := rec.Tally().Throttled["connection_limit"]; got != int64(throttles) {
		t.Errorf("throttled_total{reason=connection_limit} = %v, want %d, the sum over %d runs", got, throttles, len(runs))
	}
	if got := rec.Tally().Failed["throttled"]; got != int64(throttles) {
		t.Errorf("connection_failures_total{reason=throttled} = %v, want %d", got, throttles)
	}
}

// checkQuotaRuns checks every run and returns their throttles in total. A
// run that Stop cancelled may have been cut short; every other one saw two
// connections through and two refused.
func checkQuotaRuns(t *testing.T, runs []scenarios.Result) (throttles int64) {
	t.Helper()
	want := regexp.MustCompile(`^2 of 4 connections failed: throttled \(connection_limit\): probe: connect failed \(negotiate\): HTTP 429`)
	whole := 0
	for i, r := range runs {
		throttles += r.Throttled[throttle.ConnectionLimit]
		if i > 0 && r.Start.Sub(runs[i-1].Start) > 2*time.Second {
			t.Errorf("run %d started %v after the one before; the schedule is every 1s", i, r.Start.Sub(runs[i-1].Start))
		}
		if r.Outcome != scenarios.ResultFailure {
			t.Errorf("run %d: outcome %q, want failure", i, r.Outcome)
		}
		if strings.Contains(r.Error, "context canceled") {
			continue
		}
		whole++
		if !want.MatchString(r.Error) || r.Throttled[throttle.ConnectionLimit] != 2 || r.Connections != 2 {
			t.Errorf("run %d: error %q, throttled %v, %d connections; want 2 refused as connection_limit and 2 through",
				i, r.Error, r.Throttled, r.Connections)
		}
	}
	if whole < 2 {
		t.Errorf("only %d of %d runs ran to their end", whole, len(runs))
	}
	return throttles
}

// Past the hub's message rate limit each sending connection is closed with
// "Message count reaches limit.", counted as a message_limit throttle.
//
// The probe learns of a close when it next sends on that connection, so
// the two senders' sends lie 200 ms apart (each every 400 ms, in passes of
// their own): connection 0 sends at 0 ms (the one token), connection 1 at
// 200 ms and 0 at 400 ms are over the limit of 1/s and closed, 1's send
// at 600 ms fails and pauses the target, and 0's at 800 ms is paused.
// Sends of both in one pass would leave to the hub's ordering which of
// them is over the limit, and so whether the other one is closed too.
func TestMessageRateLimitClosesSenders(t *testing.T) {
	t.Parallel()
	srv := hubtest.Start(t, hub.Options{MessageRateLimit: 1})
	o := runEndpoint(t, scenariostest.SignalR(srv.URL()), scenario("echo", 2, time.Second, 400*time.Millisecond))
	r := o.res
	if r.Outcome != scenarios.ResultFailure || !strings.HasPrefix(r.Error, "2 of 2 connections closed during the run: ") ||
		!strings.Contains(r.Error, "Message count reaches limit.") {
		t.Fatalf("outcome %q error %q, want both connections closed for the message limit", r.Outcome, r.Error)
	}
	// After the first close the target pauses: the other sender's sends
	// that fall due meanwhile count as throttled too, and are never sent.
	if got := r.Throttled[throttle.MessageLimit]; r.Paused < 1 || got != 2+r.Paused {
		t.Errorf("run throttled %v with %d sends paused, want message_limit 2 + paused", r.Throttled, r.Paused)
	}
	if got := o.rec.Tally().Throttled["message_limit"]; got != int64(2+r.Paused) {
		t.Errorf("throttled_total{reason=message_limit} = %v, want %d", got, 2+r.Paused)
	}
	if got := o.rec.Tally().Failed["throttled"]; got != 2 {
		t.Errorf("connection_failures_total{reason=throttled} = %v, want 2", got)
	}
}

// REST sends over the hub's message rate limit are answered 429 "Message
// count reaches limit.". A refused send is not retried inside the pacer: it
// counts as a message_limit throttle and not as sent, the target pauses,
// and the sends that fall due during the pause count as throttled too. Every
// one of the 10 scheduled sends is sent, refused once, or paused.
func TestRESTMessageLimitRefusesSends(t *testing.T) {
	t.Parallel()
	srv := hubtest.Start(t, hub.Options{AccessKey: matrixKey, MessageRateLimit: 2})
	s := scenario("rest_broadcast", 1, time.Second, 100*time.Millisecond)
	o := runEndpoint(t, serverlessEndpoint(t, srv, azure.RESTAPIV1), s)
	r := o.res
	refused := o.rec.Tally().HTTP[scenariostest.HTTPResponse{Endpoint: "rest", Code: 429}]
	if refused < 1 || r.Sent+refused+r.Paused != 10 || r.Throttled[throttle.MessageLimit] != refused+r.Paused {
		t.Fatalf("sent %d, refused %d, paused %d (throttled %v): want every one of the 10 scheduled sends sent, refused once or paused",
			r.Sent, refused, r.Paused, r.Throttled)
	}
	want := regexp.MustCompile(`^throttled \(message_limit\): the hub refused \d+ sends, \d+ more fell due while paused: azure: REST broadcast: HTTP 429$`)
	if r.Outcome != scenarios.ResultFailure || !want.MatchString(r.Error) {
		t.Errorf("outcome %q error %q, want a failure naming the message limit", r.Outcome, r.Error)
	}
	if r.Received != r.Sent || r.Lost != 0 {
		t.Errorf("received %d lost %d of %d sent: a send the hub accepted must arrive", r.Received, r.Lost, r.Sent)
	}
	checkCount(t, "hubprobe_throttled_total", o.rec.Tally().Throttled["message_limit"], float64(refused+r.Paused))
	checkCount(t, "hubprobe_messages_sent_total", o.rec.Tally().Sent, float64(r.Sent))
	checkCount(t, "hubprobe_http_requests_total", o.rec.Tally().HTTP[scenariostest.HTTPResponse{Endpoint: "rest", Code: 202}], float64(r.Sent))
}

// A REST target that answers every call 429 with Retry-After: 2: over a 6 s
// rest_broadcast run the probe sends no request sooner than 2 s after the
// last 429, counts the sends that fell due meanwhile as throttled instead
// of firing them later, and the run ends within its duration and drain.
func TestRESTRetryAfterPausesTheTarget(t *testing.T) {
	t.Parallel()
	srv := hubtest.Start(t, hub.Options{AccessKey: matrixKey})
	front := newRefusingFront(t, "2")
	cs, err := azure.ParseConnectionString(srv.ConnectionString() + "ServerEndpoint=" + front.srv.URL + ";")
	if err != nil {
		t.Fatal(err)
	}
	ep := scenariostest.Serverless(cs, "")
	s := scenario("rest_broadcast", 1, 6*time.Second, time.Second)
	o := runEndpoint(t, ep, s)
	r := o.res
	times := front.times()
	if len(times) < 2 || len(times) > 3 {
		t.Fatalf("the service got %d send requests in a 6 s run refused with Retry-After: 2, want 2 or 3 (one per pause)", len(times))
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 2*time.Second {
			t.Errorf("request %d came %v after a 429 with Retry-After: 2", i+1, gap)
		}
	}
	refused := int64(len(times))
	if r.Sent != 0 || r.Paused != 6-refused || r.Throttled[throttle.HTTP429] != 6 {
		t.Errorf("sent %d, paused %d, throttled %v: want none sent, %d paused, all 6 scheduled sends throttled",
			r.Sent, r.Paused, r.Throttled, 6-refused)
	}
	checkCount(t, "hubprobe_http_requests_total", o.rec.Tally().HTTP[scenariostest.HTTPResponse{Endpoint: "rest", Code: 429}], float64(refused))
	checkCount(t, "hubprobe_throttled_total", o.rec.Tally().Throttled["http_429"], 6)
	if bound := s.Duration + s.MaxSendLag + s.LossTimeout + 2*time.Second; r.Duration > bound {
		t.Errorf("run took %v, past its duration, drain and connect (%v)", r.Duration, bound)
	}
}

// refusingFront is the REST endpoint of a service that throttles every
// call.
type refusingFront struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []time.Time
}

// newRefusingFront answers every request 429 with the given Retry-After
// (in seconds), as a throttled service's REST endpoint would, and keeps the
// time of each.
func newRefusingFront(t *testing.T, retryAfter string) *refusingFront {
	t.Helper()
	f := &refusingFront{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, time.Now())
		f.mu.Unlock()
		w.Header().Set("Retry-After", retryAfter)
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *refusingFront) times() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.seen...)
}

// A run whose every send falls inside a pause the target's earlier
// throttling left sends nothing and fails with the reason, rather than
// passing with nothing measured.
func TestRunInsideAPauseFails(t *testing.T) {
	t.Parallel()
	srv := hubtest.Start(t, hub.Options{})
	pause := &scenarios.Pause{}
	pause.Throttle(throttle.HTTP429, time.Minute, time.Now())
	ep := scenariostest.SignalR(srv.URL())
	ep.Pause = pause
	o := runEndpoint(t, ep, scenario("echo", 2, time.Second, 100*time.Millisecond))
	r := o.res
	if r.Outcome != scenarios.ResultFailure || r.Sent != 0 || r.Paused != 20 || r.Throttled[throttle.HTTP429] != 20 ||
		r.Error != "throttled (http_429): 20 sends fell due while the target was paused after throttling" {
		t.Fatalf("outcome %q (%s), sent %d, paused %d, throttled %v; want a failure with all 20 sends paused",
			r.Outcome, r.Error, r.Sent, r.Paused, r.Throttled)
	}
}
