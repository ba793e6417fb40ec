package clientconn

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
)

// slowHandler answers after wait, unless the client gives up first.
func slowHandler(wait time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(wait):
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
		}
	})
}

func get(t *testing.T, ctx context.Context, client *http.Client, rawURL string) error {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	return res.Body.Close()
}

// A connect over TLS: a first request on a fresh connection (tcp and tls
// within negotiate), a second on the same connection (no network steps in
// redirect), then phases timed by hand. Each phase gets its own time, and
// the phases add up to the whole, neither more nor less.
func TestPhaseClockPartitionsAConnect(t *testing.T) {
	srv := localtest.TLSServer(t, slowHandler(20*time.Millisecond))
	client := srv.Client()
	ctx := localtest.Ctx(t, 10*time.Second)
	began := time.Now()
	clock := StartClock()
	if err := get(t, clock.Enter(ctx, PhaseNegotiate), client, srv.URL); err != nil {
		t.Fatal(err)
	}
	if err := get(t, clock.Enter(ctx, PhaseRedirect), client, srv.URL); err != nil {
		t.Fatal(err)
	}
	clock.Enter(ctx, PhaseUpgrade)
	time.Sleep(15 * time.Millisecond)
	clock.Enter(ctx, PhaseHandshake)
	time.Sleep(10 * time.Millisecond)
	timing := clock.Stop()
	whole := time.Since(began)
	t.Logf("phases %v, total %v, measured around %v", timing, timing.Total(), whole)
	for _, c := range []struct {
		phase    string
		min, max time.Duration
	}{
		{PhaseDNS, 0, 0}, // an IP address: nothing to look up
		{PhaseTCP, time.Nanosecond, 200 * time.Millisecond},
		{PhaseTLS, time.Nanosecond, 500 * time.Millisecond},
		{PhaseNegotiate, 20 * time.Millisecond, time.Second},
		{PhaseRedirect, 20 * time.Millisecond, time.Second},
		{PhaseUpgrade, 15 * time.Millisecond, time.Second},
		{PhaseHandshake, 10 * time.Millisecond, time.Second},
	} {
		if got := timing.Of(c.phase); got < c.min || got > c.max {
			t.Errorf("%s took %v, want %v–%v", c.phase, got, c.min, c.max)
		}
	}
	if total := timing.Total(); total > whole || total < whole-10*time.Millisecond {
		t.Errorf("the phases add up to %v; the connect took %v", total, whole)
	}
}

// A name to look up: the lookup is dns, and no part of negotiate.
func TestPhaseClockTimesTheLookup(t *testing.T) {
	srv := localtest.Server(t, slowHandler(0))
	u, _ := url.Parse(srv.URL)
	u.Host = "localhost:" + u.Port()
	// Only a machine without a hosts entry for localhost cannot run this;
	// once the name resolves, a failed request is a failure of the test.
	if _, err := net.DefaultResolver.LookupHost(localtest.Ctx(t, 5*time.Second), "localhost"); err != nil {
		t.Skipf("localhost does not resolve here: %v", err)
	}
	clock := StartClock()
	ctx := clock.Enter(localtest.Ctx(t, 10*time.Second), PhaseNegotiate)
	if err := get(t, ctx, &http.Client{Transport: &http.Transport{}}, u.String()); err != nil {
		t.Fatalf("GET through localhost: %v", err)
	}
	timing := clock.Stop()
	if timing.Of(PhaseDNS) <= 0 || timing.Of(PhaseTCP) <= 0 {
		t.Errorf("phases %v: want the lookup in dns and the connect in tcp", timing)
	}
}

// A refused connect fails in tcp; a request nobody answers, in the phase
// itself. The error says so, and keeps its failure reason.
func TestPhaseClockNamesTheStepThatFailed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	hung := localtest.Server(t, slowHandler(time.Hour)).URL
	for _, c := range []struct{ url, step, text string }{
		{closed, PhaseTCP, "probe: connect failed (negotiate) in tcp: "},
		{hung, PhaseRedirect, "probe: connect failed (timeout) in redirect: negotiate did not finish in time"},
	} {
		clock := StartClock()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := get(t, clock.Enter(ctx, PhaseRedirect), &http.Client{Transport: &http.Transport{}}, c.url)
		cancel()
		err = clock.Failed(NewConnectError(PhaseNegotiate, err))
		var ce *ConnectError
		if !errors.As(err, &ce) || ce.Step != c.step || !strings.HasPrefix(err.Error(), c.text) {
			t.Errorf("%s: %v, want step %s and text %q", c.url, err, c.step, c.text)
		}
	}
}

// A dial that outlives its phase (the HTTP client abandoned it) reports
// into nothing: the clock stopped, the timing stays as it was.
func TestPhaseClockIgnoresStepsAfterItsPhase(t *testing.T) {
	clock := StartClock()
	clock.Enter(context.Background(), PhaseNegotiate)
	clock.requestBegan()
	timing := clock.Stop()
	clock.stepStarted(stepTCP)
	clock.stepDone(stepTCP, nil)
	if again := clock.Stop(); again != timing {
		t.Errorf("timing changed after Stop: %v, then %v", timing, again)
	}
}

// A dial the HTTP client starts for a request and then abandons for an
// idle connection is no step of the request: once it is sent, a step
// still going or starting is dropped, and a failure is not the
// request's.
func TestPhaseClockDropsDialsOffTheRequestsPath(t *testing.T) {
	clock := StartClock()
	clock.Enter(context.Background(), PhaseNegotiate)
	clock.requestBegan()
	clock.stepStarted(stepTCP) // a dial the request will not wait for
	clock.stepStarted(stepDNS)
	clock.stepDone(stepDNS, errors.New("no such host"))
	clock.requestSent() // on an idle connection
	clock.stepStarted(stepTLS)
	time.Sleep(5 * time.Millisecond)
	clock.stepDone(stepTCP, nil)
	err := clock.Failed(NewConnectError(PhaseNegotiate, errors.New("HTTP 429")))
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Step != PhaseNegotiate {
		t.Errorf("failed in %q, want the negotiate exchange itself", ce.Step)
	}
	if timing := clock.Stop(); timing.Of(PhaseTCP) != 0 || timing.Of(PhaseTLS) != 0 || timing.Of(PhaseNegotiate) < 5*time.Millisecond {
		t.Errorf("phases %v: the abandoned dial's time is negotiate's", timing)
	}
}

// A dial that an earlier phase's request abandoned and that reports once
// the next phase began, before that phase's own request asked for a
// connection, is no step of the next phase: its time stays the phase's.
func TestPhaseClockDropsStepsBeforeThePhasesRequest(t *testing.T) {
	clock := StartClock()
	clock.Enter(context.Background(), PhaseNegotiate)
	clock.requestBegan()
	clock.stepStarted(stepTCP) // a dial negotiate's request will not wait for
	clock.requestSent()        // on an idle connection
	clock.Enter(context.Background(), PhaseUpgrade)
	clock.stepStarted(stepTLS) // that dial, going on
	time.Sleep(5 * time.Millisecond)
	clock.stepDone(stepTLS, nil)
	if timing := clock.Stop(); timing.Of(PhaseTLS) != 0 || timing.Of(PhaseUpgrade) < 5*time.Millisecond {
		t.Errorf("phases %v: the abandoned dial's time is upgrade's", timing)
	}
}

// Entering a phase on a context the clock already traces allocates
// nothing: a thousand connects at once leave no garbage per phase.
func TestPhaseClockEntersWithoutAllocating(t *testing.T) {
	clock := StartClock()
	ctx := clock.Traced(context.Background())
	phases := []string{PhaseNegotiate, PhaseRedirect, PhaseUpgrade, PhaseHandshake}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		clock.Enter(ctx, phases[i%len(phases)])
		i++
	})
	if allocs != 0 {
		t.Errorf("Enter allocated %.0f times per phase, want none", allocs)
	}
}
