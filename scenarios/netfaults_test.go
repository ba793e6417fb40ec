package scenarios_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/internal/faulthubtest"
	"github.com/hubprobe/hubprobe/internal/toxitest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
	"github.com/hubprobe/hubprobe/scenarios/wire/corewire"
)

// toxic is one toxiproxy toxic.
type toxic = toxitest.Toxic

// The injected delay and jitter of the latency toxic, in milliseconds: the
// toxic draws a whole number from [latency-jitter, latency+jitter-1].
const (
	injectedLatency = 100
	injectedJitter  = 20
)

func latencyToxic() toxic { return toxitest.Latency("downstream", injectedLatency, injectedJitter) }

// blackHole swallows every byte and never closes (timeout 0).
func blackHole(stream string) toxic {
	return toxic{Type: "timeout", Stream: stream, Toxicity: 1, Attributes: map[string]any{"timeout": 0}}
}

// resetOnClose never acts itself (toxicity 0), but toxiproxy sets SO_LINGER
// 0 on every socket of a proxy that has a reset_peer toxic when the socket
// is accepted, so the proxy ends a connection with a reset (RST), not a FIN.
var resetOnClose = toxic{Type: "reset_peer", Stream: "upstream", Toxicity: 0, Attributes: map[string]any{"timeout": 0}}

// cutMidFrame is the byte on the WebSocket at which limit_data closes it:
// the 101 response, the handshake reply and OnConnected take about 210
// bytes, and each 256-byte echo comes back in a frame of about 380, so
// 1,575 falls in the middle of the fourth echo.
const cutMidFrame = 1575

// slowLinkRate is the bandwidth toxic's limit, in KB/s (1,000 bytes), on
// each connection.
const slowLinkRate = 40

// netFault is a TCP-level fault: toxiproxy, in process on 127.0.0.1, in
// front of the embedded hub (or a fault server), with toxics in the way.
type netFault struct {
	name string
	// script, when set, runs a fault server behind the proxy instead of
	// the embedded hub.
	script *faulthubtest.Script
	toxics []toxic // there from the start
	// strike is added during the first run, once each connection had 3
	// deliveries, and stays for the second.
	strike []toxic
	// skipNegotiation keeps the WebSocket the only connection through the
	// proxy, so a byte count is the WebSocket's alone.
	skipNegotiation bool
	tweak           func(s *config.Scenario)
	runs            [2]faultCase // what each run must report
}

func netFaults() []netFault {
	closedMidRun := func(drop, errText string) faultCase {
		return faultCase{reason: scenarios.FailClosed, drop: drop, bound: midRunBound, check: threeEachThenLost,
			errText: `^2 of 2 connections closed during the run: probe: ` + errText}
	}
	halfOpen := `server timeout: no answer to a WebSocket ping within 1s; the connection is half-open$`
	twice := func(fc faultCase) [2]faultCase { return [2]faultCase{fc, fc} }
	return []netFault{
		{
			name:   "latency 100 ms with 20 ms jitter",
			toxics: []toxic{latencyToxic()},
			runs:   twice(faultCase{success: true, bound: midRunBound, check: latencyInjected}),
		},
		{
			// Each connection is offered about 83 KB/s and carries 40.
			name:   "bandwidth 40 KB/s, half the load",
			toxics: []toxic{{Type: "bandwidth", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"rate": slowLinkRate}}},
			tweak:  func(s *config.Scenario) { s.MessageSize = 8192; s.Duration = 2 * time.Second },
			runs:   twice(faultCase{success: true, bound: midRunBound, check: slowLink}),
		},
		{
			name:            "connection cut mid-frame (FIN)",
			toxics:          []toxic{{Type: "limit_data", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"bytes": cutMidFrame}}},
			skipNegotiation: true,
			runs:            twice(closedMidRun(clientconn.DropTransport, `server closed the WebSocket without a Close message: websocket: close 1006 \(abnormal closure\): unexpected EOF$`)),
		},
		{
			name:            "connection reset mid-frame (RST)",
			toxics:          []toxic{resetOnClose, {Type: "limit_data", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"bytes": cutMidFrame}}},
			skipNegotiation: true,
			runs:            twice(closedMidRun(clientconn.DropTransport, `connection lost: read tcp 127\.0\.0\.1:\d+->127\.0\.0\.1:\d+: read: connection reset by peer$`)),
		},
		{
			// The hub hangs up after 3 echoes; slow_close holds its FIN
			// back for 3 s, longer than the rest of the run.
			name:   "hub hangs up behind a 3 s slow close",
			script: &faulthubtest.Script{Fault: faulthubtest.AbruptClose, After: 3},
			toxics: []toxic{{Type: "slow_close", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"delay": 3000}}},
			runs:   twice(closedMidRun(clientconn.DropKeepAlive, halfOpen)),
		},
		{
			// Mid-run every byte either way is swallowed, and the path
			// stays dark: the next run cannot connect.
			name:   "black hole mid-run",
			strike: []toxic{blackHole("downstream"), blackHole("upstream")},
			runs: [2]faultCase{
				{reason: scenarios.FailClosed, drop: clientconn.DropKeepAlive, bound: midRunBound, check: blackHoled,
					errText: `^2 of 2 connections closed during the run: probe: ` + halfOpen},
				{reason: scenarios.FailTimeout, bound: connectBound,
					errText: `^2 of 2 connections failed: not connected within connect_timeout 1s: probe: connect failed \(timeout\) in negotiate: negotiate did not finish in time: Post: context deadline exceeded$`},
			},
		},
	}
}

// latencyInjected checks a run through the latency toxic: everything
// arrived, no sooner than the toxic's shortest delay and not much later
// than its longest.
func latencyInjected(t *testing.T, res scenarios.Result) {
	lo, hi := (injectedLatency-injectedJitter)*time.Millisecond, (injectedLatency+injectedJitter)*time.Millisecond
	if res.Received != res.Expected || res.Expected != 20 || !res.MetSLO() {
		t.Errorf("expected/received = %d/%d, SLO met %v; want 20/20 and met", res.Expected, res.Received, res.MetSLO())
	}
	if l := res.Latency; l.P50 < lo || l.P50 > hi || l.Max > hi+50*time.Millisecond {
		t.Errorf("latency %+v, want p50 within %v–%v and max under %v", l, lo, hi, hi+50*time.Millisecond)
	}
}

// slowLink checks a run whose replies need twice the bandwidth the link
// has: each waits behind the ones before it, so half or more arrive 1 s
// late or not within loss_timeout, when they count as lost. The hub was
// slow, not broken: the run succeeds, the SLO is missed, every expected
// message is received or lost, and no more bytes arrived than the link
// carries.
func slowLink(t *testing.T, res scenarios.Result) {
	if res.Expected != 40 || res.Received == 0 || res.Received+res.Lost != res.Expected ||
		(res.SlowMessages+res.Lost)*2 < res.Expected || res.MetSLO() {
		t.Errorf("expected/received/lost/slow = %d/%d/%d/%d, SLO met %v; want 40 expected, each received or lost, half or more slow or lost, SLO missed",
			res.Expected, res.Received, res.Lost, res.SlowMessages, res.MetSLO())
	}
	perConn := float64(res.ReceivedBytes) / 2 / res.Duration.Seconds() / 1000
	if perConn > slowLinkRate || perConn < slowLinkRate*0.6 {
		t.Errorf("received %.1f KB/s per connection through a %d KB/s link", perConn, slowLinkRate)
	}
}

// blackHoled checks the first run into the black hole: the 6 deliveries
// before it (and any already on their way) arrived, the rest are lost.
func blackHoled(t *testing.T, res scenarios.Result) {
	if res.Sent != 20 || res.Received < 6 || res.Received > 8 || res.Lost != res.Expected-res.Received {
		t.Errorf("sent/received/lost = %d/%d/%d, want 20 sent, 6–8 received, the rest lost", res.Sent, res.Received, res.Lost)
	}
}

// TestNetworkFaults runs each TCP-level fault twice and checks what
// hubprobe reports; then that nothing it started is left running.
func TestNetworkFaults(t *testing.T) {
	baseGoroutines, _ := quiesce()
	t.Run("fault", func(t *testing.T) {
		var wg sync.WaitGroup
		for _, nf := range netFaults() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(nf.name, func(t *testing.T) { runNetFault(t, nf) })
			}()
		}
		wg.Wait()
	})
	// toxiproxy v2.12.0 keeps the two goroutines of a link whose
	// destination went away while its source went on sending (the hub that
	// hangs up): the link's writer returns and nothing drains the toxic
	// chain after it. They are toxiproxy's, blocked on channels for good,
	// and not counted; every goroutine of hubprobe's and the hubs' is.
	waitForGoroutines(t, baseGoroutines, toxiproxyPackage)
}

// toxiproxyPackage prefixes the stack frames of toxiproxy's goroutines.
const toxiproxyPackage = "github.com/Shopify/toxiproxy/"

func runNetFault(t *testing.T, nf netFault) {
	var srv *faulthubtest.Server
	hubURL := ""
	if nf.script != nil {
		var err error
		if srv, err = faulthubtest.Start(*nf.script); err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		hubURL = srv.URL()
	} else {
		hubURL = hubtest.Start(t, hub.Options{}).URL()
	}
	proxy, target := toxitest.Start(t, hubURL)
	defer proxy.Stop()
	toxitest.Add(t, proxy, nf.toxics...)
	s := faultScenario(nf.name, 2)
	if nf.tweak != nil {
		nf.tweak(&s)
	}
	rec := scenariostest.NewRecorder()
	ep := scenarios.Endpoint{Wire: corewire.New(corewire.Target{URL: target, SkipNegotiation: nf.skipNegotiation})}
	for i, want := range nf.runs {
		runner := &scenarios.Runner{Scenario: s, Recorder: rec, Endpoint: ep}
		var strike *striker
		if i == 0 && nf.strike != nil {
			strike = &striker{Recorder: rec, fire: func() { toxitest.Add(t, proxy, nf.strike...) }}
			strike.left.Store(int64(3 * s.Connections))
			runner.Recorder = strike
		}
		res := runBounded(t, runner)
		strike.wait()
		t.Logf("run %d: %s in %v, sent/received/lost/slow %d/%d/%d/%d, p50 %v: %s", i+1, res.Outcome,
			res.Duration.Round(time.Millisecond), res.Sent, res.Received, res.Lost, res.SlowMessages, res.Latency.P50, res.Error)
		checkResult(t, want, res)
	}
	checkRunCounts(t, nf.runs[:], rec, float64(s.Connections))
	if srv != nil {
		if got := srv.Counts().Struck; got != int64(2*s.Connections) {
			t.Errorf("the hub hung up %d times, want %d", got, 2*s.Connections)
		}
	}
}

// striker adds toxics once a number of deliveries were recorded, so a fault
// strikes in the middle of a run.
type striker struct {
	scenarios.Recorder
	left  atomic.Int64
	fire  func()
	fired sync.WaitGroup
}

func (s *striker) Delivered(d scenarios.Delivery) {
	s.Recorder.Delivered(d)
	if s.left.Add(-1) == 0 {
		s.fired.Add(1)
		go func() { defer s.fired.Done(); s.fire() }()
	}
}

// wait returns once the toxics are in place; a nil striker has none.
func (s *striker) wait() {
	if s != nil {
		s.fired.Wait()
	}
}

// TestLatencyToxicAt1000Connections holds hubprobe's latency measurement
// to the delay the network adds: 1,000 connections, each echoing once a
// second through a 100 ms ± 20 ms latency toxic, must read a p50 within
// the toxic's median (which is 0.5 ms under 100 ms: it draws whole
// milliseconds) and 5 ms above it.
func TestLatencyToxicAt1000Connections(t *testing.T) {
	baseGoroutines, _ := quiesce()
	func() {
		srv := hubtest.Start(t, hub.Options{})
		defer srv.Close()
		proxy, target := toxitest.Start(t, srv.URL())
		defer proxy.Stop()
		toxitest.Add(t, proxy, latencyToxic())
		s := scenario("echo", 1000, 5*time.Second, time.Second)
		s.ConnectConcurrency, s.ConnectTimeout = 200, 10*time.Second
		s.Timeout = s.ConnectTimeout + s.Duration + s.LossTimeout + config.DefaultTimeoutPad
		rec := scenariostest.NewRecorder()
		runner := &scenarios.Runner{Scenario: s, Endpoint: scenariostest.SignalR(target), Recorder: rec}
		res := runBounded(t, runner)
		t.Logf("%s in %v, sent/received/lost %d/%d/%d, latency %+v, max send lag %v", res.Outcome, res.Duration.Round(time.Millisecond),
			res.Sent, res.Received, res.Lost, res.Latency, res.MaxSendLag)
		assertCounts(t, runOutcome{res: res, rec: rec}, 5000, 5000)
		checkLatencyToxic(t, res, rec)
	}()
	waitForGoroutines(t, baseGoroutines)
}

func checkLatencyToxic(t *testing.T, res scenarios.Result, rec *scenariostest.Recorder) {
	t.Helper()
	delay, jitter := injectedLatency*time.Millisecond, injectedJitter*time.Millisecond
	if p50 := res.Latency.P50; p50 < delay-time.Millisecond || p50 > delay+5*time.Millisecond {
		t.Errorf("p50 %v through a %v ± %v latency toxic, want %v–%v", p50, delay, jitter, delay-time.Millisecond, delay+5*time.Millisecond)
	}
	// The jitter is measured too: a tenth of the draws lie above
	// delay + 0.8 × jitter.
	if p90 := res.Latency.P90; p90 < delay+jitter*7/10 || p90 > delay+jitter+5*time.Millisecond {
		t.Errorf("p90 %v, want %v–%v", p90, delay+jitter*7/10, delay+jitter+5*time.Millisecond)
	}
	for _, reason := range failureReasons {
		if got := rec.Tally().Failed[reason]; got != 0 {
			t.Errorf("connections failed for %q: %v, want 0", reason, got)
		}
	}
}
