package scenarios

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/internal/sleep"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// Held runs a held scenario (kind: held): its connections live as long as
// hubprobe does, as users' connections do. Each one runs the echo kind's
// exchange on a steady open-loop schedule of its own; one that drops is
// counted by reason and reconnected on its wire's schedule (wire.Spec's
// ReconnectDelays), and what was due while it was away goes out once it
// is back, so that every message counts by identity as delivered late or
// lost. Every held.report_interval the measurements are reported as a run
// (heldWindow).
type Held struct {
	report func(Result)
	// stopping holds every send while Stop lets what is in flight arrive.
	stopping atomic.Bool
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	win      windows
	// dials bounds the connects under way, to connect_concurrency.
	dials chan struct{}

	mu     sync.Mutex
	rn     *Runner
	dialer wire.Dialer
	slots  []*heldSlot
}

// Hold starts rn's held scenario: its connections connect, and every
// report goes to report until Stop. It fails only when the target's wire
// cannot be set up.
func (rn *Runner) Hold(ctx context.Context, report func(Result)) (*Held, error) {
	h := &Held{rn: rn, report: report, dials: make(chan struct{}, rn.connectConcurrency())}
	h.ctx, h.cancel = context.WithCancel(ctx)
	dialer, err := h.openDialer(rn)
	if err != nil {
		h.cancel()
		return nil, err
	}
	h.dialer = dialer
	n := rn.Connections()
	h.win.rotate(h.newWindow(time.Now(), n), time.Time{})
	h.mu.Lock()
	h.resizeLocked(n)
	h.mu.Unlock()
	h.wg.Add(1)
	go h.rotateWindows()
	return h, nil
}

// openDialer prepares the dialing of rn's connections.
func (h *Held) openDialer(rn *Runner) (wire.Dialer, error) {
	return rn.Endpoint.Wire.Open(wire.Run{
		Scenario: rn.Scenario, WriteTimeout: rn.stallWait(), RESTObserver: heldObserver{h: h, conn: -1},
	})
}

// runner is the scenario as it stands, after the last Update.
func (h *Held) runner() *Runner {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rn
}

// Update follows a reload of the scenario: connections are added or
// closed to match, never all dropped at once. When the target or the
// wire's settings changed, the connections move over one at a time; any
// other change (send interval, message size, report interval) applies
// from each connection's next send, or the next report.
func (h *Held) Update(rn *Runner) error {
	h.mu.Lock()
	moved := wireChanged(h.rn, rn)
	if moved {
		dialer, err := h.openDialer(rn)
		if err != nil {
			h.mu.Unlock()
			return err
		}
		h.dialer = dialer
	}
	h.rn = rn
	grown := h.resizeLocked(rn.Connections())
	if moved {
		h.wg.Add(1)
		go h.moveOver(slices.Clone(h.slots))
	}
	h.mu.Unlock()
	if w := h.win.now(); grown && w != nil && w.slots < rn.Connections() {
		h.endWindow(time.Now(), rn.Connections())
	}
	return nil
}

// wireChanged reports whether b reaches its hub other than a does.
func wireChanged(a, b *Runner) bool {
	sa, sb := a.Scenario, b.Scenario
	return !reflect.DeepEqual(a.Endpoint.Wire, b.Endpoint.Wire) || sa.Transport != sb.Transport || sa.Protocol != sb.Protocol ||
		!slices.Equal(sa.FallbackTransports, sb.FallbackTransports) || sa.ConnectTimeout != sb.ConnectTimeout
}

// moveOver reconnects slots one at a time, each once the one before it
// is connected again (or gave up), so a moved target never sees all of
// them leave at once.
func (h *Held) moveOver(slots []*heldSlot) {
	defer h.wg.Done()
	for _, s := range slots {
		done := s.moveOver()
		select {
		case <-done:
		case <-h.ctx.Done():
			return
		}
	}
}

// resizeLocked starts or retires slots until there are n, and reports
// whether it started any: a report whose ledger has no room for them must
// give way to a new one.
func (h *Held) resizeLocked(n int) (grown bool) {
	for len(h.slots) > n {
		last := h.slots[len(h.slots)-1]
		h.slots = h.slots[:len(h.slots)-1]
		last.retire()
	}
	grown = len(h.slots) < n
	for len(h.slots) < n {
		s := newHeldSlot(h, len(h.slots))
		h.slots = append(h.slots, s)
		h.wg.Add(1)
		go s.run(h.ctx)
	}
	return grown
}

// Stop closes every connection and reports what the current report
// measured so far.
func (h *Held) Stop() {
	open, now := h.Open(), time.Now()
	h.stopping.Store(true)
	h.settle()
	h.cancel()
	h.wg.Wait()
	rn := h.runner()
	if w := h.win.now(); w != nil {
		w.end = now
	}
	due := h.win.rotate(nil, time.Time{})
	for _, w := range []*heldWindow{due, h.win.drained(now.Add(time.Hour))} {
		if w != nil {
			h.report(w.result(rn, open))
		}
	}
}

// settle waits, at most the loss timeout, for the current report's
// messages in flight.
func (h *Held) settle() {
	w := h.win.now()
	if w == nil {
		return
	}
	deadline := time.Now().Add(h.runner().Scenario.LossTimeout)
	for !w.tracker.complete() && time.Now().Before(deadline) {
		if sleep.For(h.ctx, 5*time.Millisecond) != nil {
			return
		}
	}
}

// Open is how many of the scenario's connections are open now.
func (h *Held) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.slots {
		if s.open.Load() {
			n++
		}
	}
	return n
}

// userID is the user held connection i connects as where the wire needs
// one: unique to the scenario and, by the connection's index among all
// shards', to the shard.
func (h *Held) userID(rn *Runner, i int) string {
	first := rn.Shard.First(rn.Scenario.Connections)
	return "hubprobe-" + runID(rn.Scenario.Name, time.Time{}) + "-" + strconv.Itoa(first+i)
}

// rotateWindows ends each report at its end, on the scenario's grid of
// report intervals, and reports it once its loss timeout has passed.
func (h *Held) rotateWindows() {
	defer h.wg.Done()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		now := time.Now()
		if w := h.win.drained(now); w != nil {
			h.report(w.result(h.runner(), h.Open()))
		}
		if w := h.win.now(); w != nil && !now.Before(w.end) {
			h.endWindow(now, h.size())
		}
		timer.Reset(h.nextWake())
		select {
		case <-h.ctx.Done():
			return
		case <-timer.C:
		}
	}
}

// endWindow ends the current report at now and opens the next, for
// slots connections, ending on the grid of report intervals.
func (h *Held) endWindow(now time.Time, slots int) {
	rn := h.runner()
	next := h.newWindow(now, slots)
	next.end = gridAfter(now, rn.Scenario.Held.ReportInterval)
	if w := h.win.now(); w != nil {
		w.end = now
		next.tracker.keepRoundTrips(w.tracker)
	}
	if due := h.win.rotate(next, now.Add(rn.Scenario.LossTimeout)); due != nil {
		h.report(due.result(rn, h.Open()))
	}
}

// gridAfter is the first multiple of every since the Unix epoch after t,
// so reports end together in every process that holds the scenario.
func gridAfter(t time.Time, every time.Duration) time.Time {
	return t.Truncate(every).Add(every)
}

// nextWake is when rotateWindows next has something to do.
func (h *Held) nextWake() time.Duration {
	wake := time.Now().Add(time.Minute)
	if w := h.win.now(); w != nil && w.end.Before(wake) {
		wake = w.end
	}
	if at := h.win.drainedBy(); !at.IsZero() && at.Before(wake) {
		wake = at
	}
	return max(time.Until(wake), time.Millisecond)
}

// size is how many slots there are.
func (h *Held) size() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.slots)
}

// heldObserver counts what one held connection (or, for conn -1, the
// scenario's REST client) sees in the current report.
type heldObserver struct {
	h    *Held
	conn int
}

func (o heldObserver) current() (observer, bool) {
	w := o.h.win.now()
	if w == nil || o.conn >= w.slots {
		return observer{}, false
	}
	return observer{t: w.tracker, conn: o.conn}, true
}

func (o heldObserver) HTTPResponse(endpoint string, code int) {
	o.h.runner().Recorder.HTTPResponse(endpoint, code)
}

func (o heldObserver) Connected(timing clientconn.ConnectTiming) {
	o.h.runner().Recorder.Connected(timing)
}

func (o heldObserver) RoundTrip(d time.Duration) {
	if ob, ok := o.current(); ok {
		ob.RoundTrip(d)
	}
}

func (o heldObserver) BytesSent(n int) {
	if ob, ok := o.current(); ok {
		ob.BytesSent(n)
	}
}

func (o heldObserver) BytesReceived(n int) {
	if ob, ok := o.current(); ok {
		ob.BytesReceived(n)
	}
}

// heldReceiver is a held connection's side of what arrives: deliveries go
// to the report that sent them, and the first one after a drop times the
// reconnect.
type heldReceiver struct {
	heldObserver
	slot *heldSlot
}

func (rx heldReceiver) Deliver(payload json.RawMessage, _ int) {
	rx.slot.heard.Store(time.Now().UnixNano())
	rx.h.win.deliver(rx.conn, payload)
	if at := rx.slot.droppedAt.Swap(0); at != 0 {
		rx.slot.reconnected(time.Since(time.Unix(0, at)))
	}
}

func (heldReceiver) Registered() {}

// Reconnected is the wire's own reconnect (classic SignalR's), which
// keeps the connection: it counts, and times nothing.
func (rx heldReceiver) Reconnected() {
	rx.h.runner().Recorder.Event(Event{Kind: Reconnected})
}

var _ wire.Receiver = heldReceiver{}
