package scenarios_test

import (
	"context"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/faulthubtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
	"github.com/hubprobe/hubprobe/throttle"
)

// Every connection failure reason, so each case can pin all of them.
var failureReasons = []string{
	scenarios.FailNegotiate, scenarios.FailTransport, scenarios.FailHandshake,
	scenarios.FailTimeout, scenarios.FailThrottled, scenarios.FailClosed, scenarios.FailAuth,
}

// faultCase is one way a target misbehaves and what hubprobe must report.
type faultCase struct {
	name   string
	script faulthubtest.Script
	// url, when set, is the target instead of a fault server.
	url   func(t *testing.T) string
	conns int // connections per run; 2 when zero
	tweak func(s *config.Scenario)

	success bool   // the run still succeeds (the hub was slow, not broken)
	reason  string // counted once per connection and run; "" for none
	drop    string // the drop reason of every connection, for a mid-run fault
	errText string // regexp Result.Error must match
	// throttled is hubprobe_throttled_total per reason, per run.
	throttled map[string]float64
	// bound is how long a run may take; past it, hubprobe did not notice
	// the fault itself and only the run's timeout ended the run.
	bound time.Duration
	check func(t *testing.T, res scenarios.Result)
}

// faultScenario is a short echo scenario with tight timeouts.
func faultScenario(name string, conns int) config.Scenario {
	s := scenario("echo", conns, time.Second, 100*time.Millisecond)
	s.Name = name
	s.ConnectTimeout = time.Second
	s.LossTimeout = 500 * time.Millisecond
	s.Timeout = s.ConnectTimeout + s.Duration + s.LossTimeout + config.DefaultTimeoutPad
	return s
}

// Bounds, generous for a loaded 2-core machine: a connect fault is known
// once connect_timeout has passed; a mid-run fault once the send window and
// the loss timeout (plus, for a half-open socket, the pong wait) are over.
const (
	connectBound = 4 * time.Second
	midRunBound  = 7 * time.Second
)

// faultCases are every fault, in the order they run: those that stop the
// connect, those that end a connection mid-run, and hubs that deliver
// nothing or late.
func faultCases() []faultCase {
	return slices.Concat(connectFaultCases(), midRunFaultCases(), deliveryFaultCases())
}

func connectFaultCases() []faultCase {
	return []faultCase{
		{
			name: "port closed", url: closedPort, reason: scenarios.FailNegotiate, bound: connectBound,
			errText: `^2 of 2 connections failed: probe: connect failed \(negotiate\) in tcp: Post: dial tcp 127\.0\.0\.1:\d+: connect: connection refused$`,
		},
		{
			name: "DNS failure", url: func(*testing.T) string { return "http://hubprobe-does-not-exist.invalid/hub" },
			reason: scenarios.FailNegotiate, bound: connectBound,
			errText: `connect failed \(negotiate\) in dns: lookup hubprobe-does-not-exist\.invalid: no such host`,
		},
		{
			name: "negotiate never answered", script: faulthubtest.Script{Fault: faulthubtest.Silent},
			reason: scenarios.FailTimeout, bound: connectBound,
			errText: `^2 of 2 connections failed: not connected within connect_timeout 1s: probe: connect failed \(timeout\) in negotiate: negotiate did not finish in time`,
		},
		{
			name: "negotiate 500", script: faulthubtest.Script{Fault: faulthubtest.NegotiateStatus, Status: 500, Bodies: []string{"boom"}},
			reason: scenarios.FailNegotiate, bound: connectBound,
			errText: `connect failed \(negotiate\): HTTP 500: unexpected HTTP status 500$`,
		},
		{
			name: "negotiate malformed JSON", script: faulthubtest.Script{Fault: faulthubtest.NegotiateBody, Bodies: []string{`{"connectionId":`}},
			reason: scenarios.FailNegotiate, bound: connectBound,
			errText: `connect failed \(negotiate\): protocol error: invalid negotiate response: unexpected end of JSON input`,
		},
		{
			name: "negotiate without ids", script: faulthubtest.Script{Fault: faulthubtest.NegotiateBody, Bodies: []string{`{"negotiateVersion":1}`}},
			reason: scenarios.FailNegotiate, bound: connectBound,
			errText: `connect failed \(negotiate\): protocol error: negotiate response has no connectionId`,
		},
		{
			name: "negotiate without transports", script: faulthubtest.Script{Fault: faulthubtest.NegotiateBody,
				Bodies: []string{`{"negotiateVersion":1,"connectionId":"a","connectionToken":"b"}`}},
			reason: scenarios.FailNegotiate, bound: connectBound,
			errText: `connect failed \(negotiate\): server does not offer the WebSockets transport`,
		},
		upgradeRefused(400), upgradeRefused(404), upgradeRefused(409),
		{
			name: "handshake never answered", script: faulthubtest.Script{Fault: faulthubtest.HandshakeSilent},
			reason: scenarios.FailTimeout, bound: connectBound,
			errText: `not connected within connect_timeout 1s: probe: connect failed \(timeout\) in handshake: handshake`,
		},
		{
			name: "handshake error", script: faulthubtest.Script{Fault: faulthubtest.HandshakeError, Message: "Requested protocol 'json' is not available."},
			reason: scenarios.FailHandshake, bound: connectBound,
			errText: `connect failed \(handshake\): handshake refused: Requested protocol 'json' is not available\.$`,
		},
		{
			name: "429 storm", conns: 4, reason: scenarios.FailThrottled, bound: connectBound,
			script: faulthubtest.Script{Fault: faulthubtest.NegotiateStatus, Status: http.StatusTooManyRequests,
				Bodies: []string{"Too Many Requests", "Connection count reaches limit."}},
			throttled: map[string]float64{throttle.HTTP429: 2, throttle.ConnectionLimit: 2},
			errText:   `^4 of 4 connections failed: throttled \((http_429|connection_limit)\): probe: connect failed \(negotiate\): HTTP 429: unexpected HTTP status 429$`,
		},
	}
}

func midRunFaultCases() []faultCase {
	const internalErr = "Internal server error."
	return []faultCase{
		midRun("close message", faulthubtest.Script{Fault: faulthubtest.CloseMessage, Message: internalErr}, clientconn.DropServerError,
			`closed during the run: probe: server closed the connection: Internal server error\.$`),
		midRun("abrupt TCP close", faulthubtest.Script{Fault: faulthubtest.AbruptClose}, clientconn.DropTransport,
			`closed during the run: probe: (server closed the WebSocket without a Close message: websocket: close 1006 \(abnormal closure\): unexpected EOF|(connection lost|write failed): .*(connection reset by peer|broken pipe))$`),
		midRun("half-open", faulthubtest.Script{Fault: faulthubtest.HalfOpen}, clientconn.DropKeepAlive,
			`closed during the run: probe: server timeout: no answer to a WebSocket ping within 1s; the connection is half-open$`),
		func() faultCase {
			// Here the socket buffers fill up first: a write stalls.
			fc := midRun("half-open under heavy sends", faulthubtest.Script{Fault: faulthubtest.HalfOpen}, clientconn.DropKeepAlive,
				`closed during the run: probe: server timeout: a write did not finish within 1s; the server stopped reading$`)
			fc.tweak = func(s *config.Scenario) { s.MessageSize = 512 << 10; s.SendInterval = 20 * time.Millisecond }
			return fc
		}(),
		midRun("garbage frame", faulthubtest.Script{Fault: faulthubtest.Frames, Frames: []faulthubtest.Frame{faulthubtest.Text("\x00\xffgarbage\x1e")}}, clientconn.DropProtocol,
			`closed during the run: protocol error: invalid JSON record: invalid character`),
		midRun("binary frame on a text connection", faulthubtest.Script{Fault: faulthubtest.Frames, Frames: []faulthubtest.Frame{faulthubtest.Binary([]byte{0x93, 1, 2, 3})}}, clientconn.DropProtocol,
			`closed during the run: protocol error: binary frame where text frames were expected$`),
		midRun("invalid JSON", faulthubtest.Script{Fault: faulthubtest.Frames, Frames: []faulthubtest.Frame{faulthubtest.Text(`{"type":1,"target":"RecordLatency","arguments":[` + "\x1e")}}, clientconn.DropProtocol,
			`closed during the run: protocol error: invalid JSON record: unexpected end of JSON input$`),
		midRun("record separator missing", faulthubtest.Script{Fault: faulthubtest.Frames, Frames: faulthubtest.Repeat(17, 64<<10)}, clientconn.DropProtocol,
			`closed during the run: protocol error: record larger than 1048576 bytes$`),
		midRun("oversized frame", faulthubtest.Script{Fault: faulthubtest.Frames, Frames: []faulthubtest.Frame{faulthubtest.BigRecord(2 << 20)}}, clientconn.DropProtocol,
			`closed during the run: protocol error: record larger than 1048576 bytes$`),
		midRun("unknown message type", faulthubtest.Script{Fault: faulthubtest.Frames, Frames: []faulthubtest.Frame{faulthubtest.UnknownType(42)}}, clientconn.DropProtocol,
			`closed during the run: protocol error: unknown message type 42$`),
	}
}

func deliveryFaultCases() []faultCase {
	return []faultCase{
		{
			name: "hub delivers nothing", script: faulthubtest.Script{Fault: faulthubtest.Mute}, bound: midRunBound,
			errText: `^the hub delivered none of 20 expected messages within loss_timeout 500ms$`,
			check:   lostAll,
		},
		{
			// The lost messages make hubprobe ping every connection; this
			// server never answers a close frame but does answer pings, so
			// it must not be taken for half-open.
			name: "third-party hub delivers nothing", url: thirdPartyDroppingEchoes, bound: midRunBound,
			errText: `^the hub delivered none of 20 expected messages within loss_timeout 500ms$`,
			check:   lostAll,
		},
		{
			name: "slow beyond the run", script: faulthubtest.Script{Fault: faulthubtest.Slow, Delay: 3 * time.Second}, bound: midRunBound,
			errText: `^the hub delivered none of 20 expected messages within loss_timeout 500ms$`,
			check:   lostAll,
		},
		{
			// Late, but alive: what arrived is measured, the rest is lost,
			// and the run itself succeeds (the alerts judge the hub).
			name: "slow", script: faulthubtest.Script{Fault: faulthubtest.Slow, Delay: 1200 * time.Millisecond},
			tweak:   func(s *config.Scenario) { s.Duration = 2 * time.Second },
			success: true, bound: midRunBound, check: lostSome,
		},
	}
}

func upgradeRefused(status int) faultCase {
	text := `connect failed \(transport\) in upgrade: HTTP ` + strconv.Itoa(status) + `: unexpected HTTP status ` + strconv.Itoa(status)
	return faultCase{
		name:   "upgrade refused " + strconv.Itoa(status),
		script: faulthubtest.Script{Fault: faulthubtest.UpgradeRefused, Status: status},
		reason: scenarios.FailTransport, bound: connectBound, errText: text,
	}
}

// midRun strikes on each connection's fourth echo, after three deliveries.
func midRun(name string, script faulthubtest.Script, drop, errText string) faultCase {
	script.After = 3
	return faultCase{
		name: name, script: script, reason: scenarios.FailClosed, drop: drop, bound: midRunBound,
		errText: `^2 of 2 connections ` + errText, check: threeEachThenLost,
	}
}

// threeEachThenLost checks a run of 2 connections that each had 3
// deliveries before the fault: the send that met the fault was written, so
// it is expected and lost, never dropped.
func threeEachThenLost(t *testing.T, res scenarios.Result) {
	if res.Received != 6 || res.Lost != res.Expected-6 || res.Lost < 2 {
		t.Errorf("expected/received/lost = %d/%d/%d, want received 6 and the rest lost", res.Expected, res.Received, res.Lost)
	}
}

func lostAll(t *testing.T, res scenarios.Result) {
	if res.Sent != 20 || res.Received != 0 || res.Lost != 20 {
		t.Errorf("sent/received/lost = %d/%d/%d, want 20/0/20", res.Sent, res.Received, res.Lost)
	}
}

// lostSome checks a run against a hub that answers every echo 1.2 s late:
// the sends of the last 0.7 s of the 2 s window cannot arrive within the
// 0.5 s loss timeout, the earlier ones do, and every one that does is slow.
func lostSome(t *testing.T, res scenarios.Result) {
	if res.Received == 0 || res.Lost == 0 || res.Received+res.Lost != res.Expected || res.Expected != 40 {
		t.Errorf("expected/received/lost = %d/%d/%d, want 40 split between received and lost", res.Expected, res.Received, res.Lost)
	}
	if res.SlowMessages != res.Received || res.MetSLO() {
		t.Errorf("%d of %d deliveries slow, SLO met %v; want all slow and the SLO missed", res.SlowMessages, res.Received, res.MetSLO())
	}
}

func thirdPartyDroppingEchoes(t *testing.T) string {
	srv := startThirdParty(t)
	srv.DropEcho.Store(true)
	return srv.URL
}

func closedPort(t *testing.T) string {
	u, err := faulthubtest.ClosedPortURL()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestTargetFaults runs each fault twice against hubprobe and checks what it
// reports; then that nothing it started is left running or held.
func TestTargetFaults(t *testing.T) {
	baseGoroutines, baseHeap := quiesce()
	t.Run("fault", func(t *testing.T) {
		// The cases spend their time waiting on timers and sockets, so they
		// all run at once (t.Parallel would run only -parallel at a time).
		var wg sync.WaitGroup
		run := func(name string, f func(t *testing.T)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(name, f)
			}()
		}
		for _, fc := range faultCases() {
			run(fc.name, func(t *testing.T) { runFaultTwice(t, fc) })
		}
		run("scheduler keeps firing at a hung target", schedulerAgainstHungTarget)
		wg.Wait()
	})
	waitForGoroutines(t, baseGoroutines)
	_, heap := quiesce()
	t.Logf("goroutines back to %d; live heap %d KiB before, %d KiB after", baseGoroutines, baseHeap>>10, heap>>10)
	if heap > baseHeap+16<<20 {
		t.Errorf("live heap grew from %d KiB to %d KiB", baseHeap>>10, heap>>10)
	}
}

func runFaultTwice(t *testing.T, fc faultCase) {
	url := ""
	var srv *faulthubtest.Server
	if fc.url != nil {
		url = fc.url(t)
	} else {
		var err error
		if srv, err = faulthubtest.Start(fc.script); err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		url = srv.URL()
	}
	conns := max(fc.conns, 2)
	s := faultScenario(fc.name, conns)
	if fc.tweak != nil {
		fc.tweak(&s)
	}
	rec := scenariostest.NewRecorder()
	runner := &scenarios.Runner{Scenario: s, Endpoint: scenariostest.SignalR(url), Recorder: rec}
	var sent int64
	for i := range 2 {
		res := runBounded(t, runner)
		t.Logf("run %d: %s in %v, sent/received/lost %d/%d/%d: %s", i+1, res.Outcome,
			res.Duration.Round(time.Millisecond), res.Sent, res.Received, res.Lost, res.Error)
		checkResult(t, fc, res)
		sent += res.Sent
	}
	checkFaultCounts(t, fc, rec, float64(conns))
	if srv != nil {
		checkTried(t, fc.script.Fault, srv.Counts(), int64(2*conns), sent)
	}
}

// checkTried makes sure the fault was exercised: the server saw the step
// it was scripted to spoil, once per connection and run (or per echo).
func checkTried(t *testing.T, fault faulthubtest.Fault, c faulthubtest.Counts, attempts, sent int64) {
	t.Helper()
	got, want, what := c.Struck, attempts, "mid-run faults struck"
	switch fault {
	case faulthubtest.Silent, faulthubtest.NegotiateStatus, faulthubtest.NegotiateBody, faulthubtest.UpgradeRefused:
		got, what = c.Negotiations, "negotiate requests"
	case faulthubtest.HandshakeSilent, faulthubtest.HandshakeError:
		got, what = c.Handshakes, "handshakes"
	case faulthubtest.Mute, faulthubtest.Slow:
		got, want, what = c.Echoes, sent, "echoes read"
	}
	if got != want {
		t.Errorf("%s: %d, want %d", what, got, want)
	}
}

// outcomeOf is the result a run of fc must end with.
func outcomeOf(fc faultCase) string {
	if fc.success {
		return scenarios.ResultSuccess
	}
	return scenarios.ResultFailure
}

func checkResult(t *testing.T, fc faultCase, res scenarios.Result) {
	t.Helper()
	if want := outcomeOf(fc); res.Outcome != want {
		t.Errorf("outcome %q (%s), want %q", res.Outcome, res.Error, want)
	}
	if fc.errText != "" && !regexp.MustCompile(fc.errText).MatchString(res.Error) {
		t.Errorf("error %q does not match %q", res.Error, fc.errText)
	}
	if fc.errText == "" && res.Error != "" {
		t.Errorf("error %q, want none", res.Error)
	}
	if res.Received+res.Lost != res.Expected {
		t.Errorf("expected %d deliveries, received %d and lost %d: some went unaccounted", res.Expected, res.Received, res.Lost)
	}
	if res.Duration > fc.bound {
		t.Errorf("run took %v, longer than %v: the fault was not detected by hubprobe", res.Duration, fc.bound)
	}
	if fc.check != nil {
		fc.check(t, res)
	}
}

// checkFaultCounts pins every failure and throttle reason of two runs of
// fc (each run's outcome is checkResult's).
func checkFaultCounts(t *testing.T, fc faultCase, rec *scenariostest.Recorder, conns float64) {
	t.Helper()
	checkRunCounts(t, []faultCase{fc, fc}, rec, conns)
}

// checkRunCounts pins every failure and throttle reason after one run for
// each of runs, in order, into rec, and that every connection was closed.
func checkRunCounts(t *testing.T, runs []faultCase, rec *scenariostest.Recorder, conns float64) {
	t.Helper()
	failures, throttled, drops := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, fc := range runs {
		failures[fc.reason] += conns
		if fc.drop != "" {
			drops[fc.drop] += conns
		}
		for reason, n := range fc.throttled {
			throttled[reason] += n
		}
	}
	tally := rec.Tally()
	for _, reason := range failureReasons {
		if got, want := float64(tally.Failed[reason]), failures[reason]; got != want {
			t.Errorf("connections failed for %q: %v, want %v", reason, got, want)
		}
	}
	for _, reason := range []string{throttle.HTTP429, throttle.ConnectionLimit, throttle.MessageLimit, throttle.Closed} {
		if got, want := float64(tally.Throttled[reason]), throttled[reason]; got != want {
			t.Errorf("throttles for %q: %v, want %v", reason, got, want)
		}
	}
	for _, reason := range clientconn.DropReasons {
		if got, want := float64(tally.Dropped[reason]), drops[reason]; got != want {
			t.Errorf("connections dropped for %q: %v, want %v", reason, got, want)
		}
	}
	if got := tally.Active(); got != 0 {
		t.Errorf("%d connections still open after the runs, want 0", got)
	}
}

// runBounded runs once under the scenario's timeout and fails the test if
// Run does not return shortly after that.
func runBounded(t *testing.T, rn *scenarios.Runner) scenarios.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rn.Scenario.Timeout)
	defer cancel()
	done := make(chan scenarios.Result, 1)
	go func() { done <- rn.Run(ctx) }()
	select {
	case res := <-done:
		return res
	case <-time.After(rn.Scenario.Timeout + 5*time.Second):
		t.Fatalf("Run still going 5 s past its %v timeout", rn.Scenario.Timeout)
		return scenarios.Result{}
	}
}

// schedulerAgainstHungTarget shows a target that accepts connections and
// never answers does not stall the schedule: runs keep coming, each fails
// on connect_timeout, and Stop is prompt.
func schedulerAgainstHungTarget(t *testing.T) {
	srv, err := faulthubtest.Start(faulthubtest.Script{Fault: faulthubtest.Silent})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f := newSchedulerFixture(t, srv.URL())
	s := faultScenario("scheduled", 2)
	s.Schedule, s.Timeout = "@every 1s", 3*time.Second
	if err := f.Sched.Apply(oneJob(f.Rec, f.URL, s), false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, func() bool { return f.Results.Count(scenarios.ResultFailure) >= 3 })
	stopBounded(t, f.Sched)
	// Stop may cancel a run mid-connect: that run fails, but its
	// connections did not, so they are not counted.
	failed := float64(f.Results.Count(scenarios.ResultFailure))
	if got := float64(f.Rec.Tally().Failed["timeout"]); got != 2*failed && got != 2*(failed-1) {
		t.Errorf("connection_failures_total{reason=timeout} = %v after %v failed runs of 2 connections", got, failed)
	}
	if got := f.Rec.Tally().Failed["negotiate"]; got != 0 {
		t.Errorf("connection_failures_total{reason=negotiate} = %v: a cancelled connect was counted as a hub failure", got)
	}
	if got := f.Results.Count(scenarios.ResultSuccess); got != 0 {
		t.Errorf("%d runs succeeded against a hung target", got)
	}
}

// quiesce collects garbage and returns the goroutine count and live heap.
func quiesce() (goroutines int, heap uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

// waitForGoroutines fails t unless the goroutine count falls back to
// baseline within a few seconds (closing sockets take a moment).
// Goroutines whose stack names a package in ignore are not counted.
func waitForGoroutines(t *testing.T, baseline int, ignore ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	n, stacks := goroutines(ignore)
	for n > baseline && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		n, stacks = goroutines(ignore)
	}
	if n > baseline {
		t.Errorf("%d goroutines running, baseline %d:\n%s", n, baseline, strings.Join(stacks, "\n\n"))
	}
}

// goroutines counts the running goroutines, leaving out those whose stack
// names a package in ignore, and returns the stacks of those counted.
func goroutines(ignore []string) (int, []string) {
	if len(ignore) == 0 {
		n := runtime.NumGoroutine()
		buf := make([]byte, 1<<20)
		return n, []string{string(buf[:runtime.Stack(buf, true)])}
	}
	buf := make([]byte, 4<<20)
	var counted []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if !slices.ContainsFunc(ignore, func(pkg string) bool { return strings.Contains(g, pkg) }) {
			counted = append(counted, g)
		}
	}
	return len(counted), counted
}
