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
// as it starts it; the trace Enter returns reports, through
// net/http/httptrace, the DNS lookups, TCP connects and TLS handshakes of
// the requests made with it, whose time goes to dns, tcp and tls instead
// of the phase they happened in. The phases so partition the connect: they
// add up to its whole time, from StartClock to Stop. A nil clock times
// nothing.
type PhaseClock struct {
	mu     sync.Mutex
	timing ConnectTiming
	mark   time.Time // when the current phase began
	cur    *span     // the phase in progress; nil before the first Enter and after Stop
}

// span is one phase in progress and the network steps within it.
type span struct {
	phase  int
	open   [netSteps]int // steps in flight (parallel dials overlap)
	since  [netSteps]time.Time
	spent  [netSteps]time.Duration
	failed int // the step whose last attempt failed; -1 for none
	// sent: the phase's request went out (or, for a WebSocket upgrade,
	// its answer began), so the network steps on its path are over;
	// any later are the HTTP client's dials for other requests.
	sent    bool
	stopped bool
}

// StartClock starts timing a connect now.
func StartClock() *PhaseClock { return &PhaseClock{mark: time.Now()} }

// Enter ends the phase in progress and starts phase, and returns ctx
// traced into it: dns, tcp and tls steps of requests made with the
// returned context count to their own phases.
func (c *PhaseClock) Enter(ctx context.Context, phase string) context.Context {
	if c == nil {
		return ctx
	}
	s := &span{phase: phaseIndex(phase), failed: -1}
	c.mu.Lock()
	c.closeLocked(time.Now())
	c.cur = s
	c.mu.Unlock()
	return httptrace.WithClientTrace(ctx, c.trace(s))
}

// TraceInto returns dst carrying the trace of src, a context Enter
// returned: for requests of a phase that must live on another context
// than the connect's (the HTTP transports' requests outlive Dial).
func TraceInto(dst, src context.Context) context.Context {
	if trace := httptrace.ContextClientTrace(src); trace != nil {
		return httptrace.WithClientTrace(dst, trace)
	}
	return dst
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
	if errors.As(err, &ce) && ce.Step == "" && c.cur != nil {
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
	s := c.cur
	if s == nil {
		return
	}
	s.stopped = true
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
	c.mark, c.cur = now, nil
}

// trace reports s's network steps up to the moment its request is sent
// (net/http reports WroteRequest; gorilla/websocket only
// GotFirstResponseByte). The HTTP client may dial for a request and then
// hand it an idle connection instead; that dial's steps, and any after
// the phase ended, are dropped.
func (c *PhaseClock) trace(s *span) *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		DNSStart:             func(httptrace.DNSStartInfo) { c.stepStarted(s, stepDNS) },
		DNSDone:              func(i httptrace.DNSDoneInfo) { c.stepDone(s, stepDNS, i.Err) },
		ConnectStart:         func(string, string) { c.stepStarted(s, stepTCP) },
		ConnectDone:          func(_, _ string, err error) { c.stepDone(s, stepTCP, err) },
		TLSHandshakeStart:    func() { c.stepStarted(s, stepTLS) },
		TLSHandshakeDone:     func(_ tls.ConnectionState, err error) { c.stepDone(s, stepTLS, err) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { c.requestSent(s) },
		GotFirstResponseByte: func() { c.requestSent(s) },
	}
}

// requestSent ends s's network steps: what is still going is not on the
// request's path, and no earlier failure stopped it.
func (c *PhaseClock) requestSent(s *span) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.sent, s.open, s.failed = true, [netSteps]int{}, -1
}

func (c *PhaseClock) stepStarted(s *span, step int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.stopped || s.sent {
		return
	}
	if s.open[step] == 0 {
		s.since[step] = time.Now()
	}
	s.open[step]++
}

func (c *PhaseClock) stepDone(s *span, step int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.stopped || s.sent || s.open[step] == 0 {
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
