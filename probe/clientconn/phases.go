package clientconn

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http/httptrace"
	"sync"
	"time"
)

// The phases a connect's time is split into, as
// hubprobe_connect_phase_duration_seconds labels them; PhaseNegotiate and
// PhaseHandshake above are two of them. dns, tcp and tls are the network
// work of whichever request opened a new connection (negotiate, a
// redirect, the upgrade, the handshake POST of the HTTP transports);
// redirect is every negotiate after the first, when an app server hands
// the client over to Azure SignalR Service; upgrade is the WebSocket 101,
// the event stream's response or the first poll's.
const (
	PhaseDNS      = "dns"
	PhaseTCP      = "tcp"
	PhaseTLS      = "tls"
	PhaseRedirect = "redirect"
	PhaseUpgrade  = "upgrade"
)

// ConnectPhases lists every timed phase in the order a connect meets them.
var ConnectPhases = [...]string{PhaseDNS, PhaseTCP, PhaseTLS, PhaseNegotiate, PhaseRedirect, PhaseUpgrade, PhaseHandshake}

// ConnectTiming is where the time of one connect went: each phase's share,
// in the order of ConnectPhases. The shares add up to the whole.
type ConnectTiming [len(ConnectPhases)]time.Duration

// Total is the whole connect.
func (t ConnectTiming) Total() time.Duration {
	var sum time.Duration
	for _, d := range t {
		sum += d
	}
	return sum
}

// Of is phase's share; 0 for a phase the connect did not pass.
func (t ConnectTiming) Of(phase string) time.Duration {
	if i := phaseIndex(phase); i >= 0 {
		return t[i]
	}
	return 0
}

func phaseIndex(phase string) int {
	for i, p := range ConnectPhases {
		if p == phase {
			return i
		}
	}
	return -1
}

// The network steps, which are also the first three ConnectPhases.
const (
	stepDNS = iota
	stepTCP
	stepTLS
	netSteps
)

// PhaseClock times one connect. The client enters each of its own phases
// as it starts it; the clock's trace, which Enter and Traced put on a
// context, reports through net/http/httptrace the DNS lookups, TCP
// connects and TLS handshakes of the requests made with it, whose time
// goes to dns, tcp and tls instead of the phase they happened in. The
// phases so partition the connect: they add up to its whole time, from
// StartClock to Stop. A nil clock times nothing.
//
// The clock holds the phase in progress and its one trace in place, and
// a client traces its connect's context once (Traced), so entering a
// phase allocates nothing: a thousand connects at once leave no garbage
// per phase between the connections' long-lived objects.
type PhaseClock struct {
	mu     sync.Mutex
	timing ConnectTiming
	mark   time.Time // when the current phase began
	cur    span      // the phase in progress
	trace  httptrace.ClientTrace
}

// span is one phase in progress and the network steps within it.
type span struct {
	active bool // between an Enter and the next Enter or Stop
	phase  int  // index in ConnectPhases; -1 for a phase not listed there
	// requesting: a request of the phase has begun (it asked for a
	// connection) and is not sent yet (or, for a WebSocket upgrade, its
	// answer has not begun). Only then are network steps on its path;
	// the rest are the HTTP client's dials for other requests, or those
	// of an earlier phase's request that got an idle connection instead.
	requesting bool
	open       [netSteps]int // steps in flight (parallel dials overlap)
	since      [netSteps]time.Time
	spent      [netSteps]time.Duration
	failed     int // the step whose last attempt failed; -1 for none
}

// StartClock starts timing a connect now.
func StartClock() *PhaseClock {
	c := &PhaseClock{mark: time.Now()}
	c.trace = httptrace.ClientTrace{
		GetConn:              func(string) { c.requestBegan() },
		DNSStart:             func(httptrace.DNSStartInfo) { c.stepStarted(stepDNS) },
		DNSDone:              func(i httptrace.DNSDoneInfo) { c.stepDone(stepDNS, i.Err) },
		ConnectStart:         func(string, string) { c.stepStarted(stepTCP) },
		ConnectDone:          func(_, _ string, err error) { c.stepDone(stepTCP, err) },
		TLSHandshakeStart:    func() { c.stepStarted(stepTLS) },
		TLSHandshakeDone:     func(_ tls.ConnectionState, err error) { c.stepDone(stepTLS, err) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { c.requestSent() },
		GotFirstResponseByte: func() { c.requestSent() },
	}
	return c
}

// Enter ends the phase in progress and starts phase, and returns ctx
// traced into the clock (Traced): dns, tcp and tls steps of requests made
// with the returned context count to their own phases.
func (c *PhaseClock) Enter(ctx context.Context, phase string) context.Context {
	if c == nil {
		return ctx
	}
	c.mu.Lock()
	c.closeLocked(time.Now())
	c.cur = span{active: true, phase: phaseIndex(phase), failed: -1}
	c.mu.Unlock()
	return c.Traced(ctx)
}

// Traced returns ctx carrying the clock's trace, or ctx itself when it
// already does: a client that traces its connect's context once, before
// the first Enter, makes no new context per phase.
func (c *PhaseClock) Traced(ctx context.Context) context.Context {
	if c == nil || httptrace.ContextClientTrace(ctx) == &c.trace {
		return ctx
	}
	return withTrace(ctx, &c.trace)
}

// TraceInto returns dst carrying the trace of src, a context Enter
// returned: for requests of a phase that must live on another context
// than the connect's (the HTTP transports' requests outlive Dial).
func TraceInto(dst, src context.Context) context.Context {
	if trace := httptrace.ContextClientTrace(src); trace != nil {
		return withTrace(dst, trace)
	}
	return dst
}

// withTrace is httptrace.WithClientTrace, which composes a trace already
// on ctx into the one it is given, in place: trace gets a copy then, so a
// clock's own stays as the clock built it.
func withTrace(ctx context.Context, trace *httptrace.ClientTrace) context.Context {
	if httptrace.ContextClientTrace(ctx) != nil {
		composed := *trace
		trace = &composed
	}
	return httptrace.WithClientTrace(ctx, trace)
}

// Stop ends the last phase and returns the timing.
func (c *PhaseClock) Stop() ConnectTiming {
	if c == nil {
		return ConnectTiming{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked(time.Now())
	return c.timing
}

// Failed stops the clock and names the phase the connect failed in on
// err, a *ConnectError that names none yet: a network step that failed or
// was still going, else the phase in progress.
func (c *PhaseClock) Failed(err error) error {
	if c == nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var ce *ConnectError
	if errors.As(err, &ce) && ce.Step == "" && c.cur.active {
		ce.Step = c.cur.failedStep()
	}
	c.closeLocked(time.Now())
	return err
}

func (s *span) failedStep() string {
	if s.failed >= 0 {
		return ConnectPhases[s.failed]
	}
	for i := range s.open {
		if s.open[i] > 0 {
			return ConnectPhases[i]
		}
	}
	if s.phase < 0 {
		return ""
	}
	return ConnectPhases[s.phase]
}

// closeLocked gives the phase in progress its time up to now, less what
// its network steps took, which their phases get. Steps still in flight
// count up to now. Dials the HTTP client starts and then abandons for an
// idle connection can add time the request did not wait for; the steps
// are held to the phase's own time, so the sum stays exact.
func (c *PhaseClock) closeLocked(now time.Time) {
	s := &c.cur
	if !s.active {
		return
	}
	whole := now.Sub(c.mark)
	var net time.Duration
	for i := range s.spent {
		if s.open[i] > 0 {
			s.spent[i] += now.Sub(s.since[i])
		}
		s.spent[i] = min(s.spent[i], whole-net)
		net += s.spent[i]
		c.timing[i] += s.spent[i]
	}
	if s.phase >= 0 {
		c.timing[s.phase] += whole - net
	}
	c.mark, c.cur = now, span{}
}

// requestBegan opens the phase's network steps: a request of it asks for
// a connection (net/http and gorilla/websocket both report GetConn first).
func (c *PhaseClock) requestBegan() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur.requesting = c.cur.active
}

// requestSent ends the phase's network steps up to the moment its
// request is sent (net/http reports WroteRequest; gorilla/websocket only
// GotFirstResponseByte): what is still going is not on the request's
// path, and no earlier failure stopped it. The HTTP client may dial for a
// request and then hand it an idle connection instead; that dial's later
// steps are dropped.
func (c *PhaseClock) requestSent() {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.cur
	s.requesting, s.open, s.failed = false, [netSteps]int{}, -1
}

func (c *PhaseClock) stepStarted(step int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.cur
	if !s.requesting {
		return
	}
	if s.open[step] == 0 {
		s.since[step] = time.Now()
	}
	s.open[step]++
}

func (c *PhaseClock) stepDone(step int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.cur
	if !s.requesting || s.open[step] == 0 {
		return
	}
	if s.open[step]--; s.open[step] == 0 {
		s.spent[step] += time.Since(s.since[step])
	}
	switch {
	case err != nil:
		s.failed = step
	case s.failed == step:
		s.failed = -1 // another attempt of the step (the other address family) made it
	}
}
