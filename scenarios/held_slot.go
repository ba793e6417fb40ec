package scenarios

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// heldSlot is one held connection: connected again and again for as long
// as the scenario holds it, sending on its own steady schedule.
type heldSlot struct {
	h *Held
	i int
	// open is whether the slot's connection is up now.
	open atomic.Bool
	// droppedAt is when the connection last dropped (Unix nanoseconds),
	// until a message arrives on its successor: 0 otherwise.
	droppedAt atomic.Int64
	// heard is when a message last arrived (Unix nanoseconds); checking
	// is true while a liveness check of the connection runs.
	heard    atomic.Int64
	checking atomic.Bool
	retired  chan struct{}
	move     chan chan struct{} // reconnect now, and say when connected
	moved    chan struct{}      // closed once connected after a move

	conn    wire.Conn
	opened  time.Time
	pending []pendingSend
	buf     []byte
}

// pendingSend is a message that fell due while its connection was away:
// it goes out, stamped when it fell due, once the connection is back.
type pendingSend struct {
	w  *heldWindow
	id uint64
	us int64
}

func newHeldSlot(h *Held, i int) *heldSlot {
	return &heldSlot{h: h, i: i, retired: make(chan struct{}), move: make(chan chan struct{}, 1)}
}

// retire ends the slot: its connection closes, and it connects no more.
func (s *heldSlot) retire() { close(s.retired) }

// moveOver asks the slot to reconnect now; the channel it returns is
// closed once it is connected again, or has ended.
func (s *heldSlot) moveOver() <-chan struct{} {
	done := make(chan struct{})
	select {
	case s.move <- done:
	default:
		close(done) // a move already waits
	}
	return done
}

// run keeps the slot connected until ctx ends or it is retired, and makes
// every send that falls due.
func (s *heldSlot) run(ctx context.Context) {
	defer s.h.wg.Done()
	defer s.end(ctx)
	timer := time.NewTimer(0)
	defer timer.Stop()
	next, retryAt, attempt := s.firstDue(), time.Now(), 0
	for {
		next = s.sendDue(ctx, next)
		s.checkAlive(ctx)
		if s.conn == nil && !time.Now().Before(retryAt) {
			if s.connect(ctx) {
				attempt = 0
			} else {
				retryAt, attempt = time.Now().Add(s.h.runner().Endpoint.Wire.Spec().Delay(attempt+1)), attempt+1
			}
		}
		timer.Reset(s.wait(next, retryAt))
		select {
		case <-ctx.Done():
			return
		case <-s.retired:
			return
		case done := <-s.move:
			s.close(ctx)
			s.moved, retryAt, attempt = done, time.Now(), 0
		case <-s.ended():
			s.dropped()
			retryAt, attempt = time.Now().Add(s.h.runner().Endpoint.Wire.Spec().Delay(0)), 0
		case <-timer.C:
		}
	}
}

// firstDue spreads the connections' sends over one send interval, each
// on its own slot of it, from the next multiple of the interval on.
func (s *heldSlot) firstDue() time.Time {
	rn := s.h.runner()
	every := rn.Scenario.SendInterval
	offset := every * time.Duration(s.i) / time.Duration(max(rn.Connections(), 1))
	return gridAfter(time.Now(), every).Add(offset)
}

// checkAlive pings a connection on which nothing arrived for the loss
// timeout and two sends: a hub, or a path, that swallows every byte
// leaves the socket open, and a held connection would wait for its
// server timeout. One that does not answer within the stall wait ends,
// as a keepalive drop.
func (s *heldSlot) checkAlive(ctx context.Context) {
	rn := s.h.runner()
	silent := time.Since(time.Unix(0, max(s.heard.Load(), s.opened.UnixNano())))
	if s.conn == nil || silent < rn.Scenario.LossTimeout+2*rn.Scenario.SendInterval || !s.checking.CompareAndSwap(false, true) {
		return
	}
	go func(conn wire.Conn) {
		defer s.checking.Store(false)
		_ = conn.CheckAlive(ctx, rn.stallWait())
	}(s.conn)
}

// wait is how long until the next send or, while disconnected, the next
// connect attempt.
func (s *heldSlot) wait(next, retryAt time.Time) time.Duration {
	wake := next
	if s.conn == nil && retryAt.Before(wake) {
		wake = retryAt
	}
	return max(time.Until(wake), 0)
}

// ended is closed once the slot's connection ended; nil while it has none.
func (s *heldSlot) ended() <-chan struct{} {
	if s.conn == nil {
		return nil
	}
	return s.conn.Done()
}

// connect opens the slot's connection, at most connect_concurrency of the
// scenario's at once, after any throttle pause of the target; it reports
// whether it connected.
func (s *heldSlot) connect(ctx context.Context) bool {
	rn := s.h.runner()
	if _, held := rn.pause().Holding(time.Now()); held {
		return false
	}
	select {
	case s.h.dials <- struct{}{}:
		defer func() { <-s.h.dials }()
	case <-ctx.Done():
		return false
	}
	conn, err := s.dial(ctx, rn)
	if err != nil {
		s.failed(ctx, rn, err)
		return false
	}
	s.conn, s.opened = conn, time.Now()
	s.open.Store(true)
	s.heard.Store(s.opened.UnixNano())
	rn.Recorder.Event(Event{Kind: ConnectionOpened})
	if s.moved != nil {
		close(s.moved)
		s.moved = nil
	}
	s.flush(ctx)
	return true
}

// dial opens one connection within connect_timeout.
func (s *heldSlot) dial(ctx context.Context, rn *Runner) (wire.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, rn.Scenario.ConnectTimeout)
	defer cancel()
	s.h.mu.Lock()
	dialer := s.h.dialer
	s.h.mu.Unlock()
	rx := heldReceiver{heldObserver: heldObserver{h: s.h, conn: s.i}, slot: s}
	return dialer.Dial(ctx, s.h.userID(rn, s.i), rx)
}

// failed counts a connect that failed, by reason; a throttled one pauses
// the target. A connect cut short by the scenario's end is nobody's fault.
func (s *heldSlot) failed(ctx context.Context, rn *Runner, err error) {
	if ctx.Err() != nil {
		return
	}
	reason, throttled := throttledBy(err)
	if throttled {
		rn.pause().Throttle(reason, 0, time.Now())
		if w := s.h.win.now(); w != nil {
			w.tracker.throttle(reason)
		}
		rn.Recorder.Event(Event{Kind: ConnectionFailed, Reason: FailThrottled})
		return
	}
	rn.Recorder.Event(Event{Kind: ConnectionFailed, Reason: failureReason(err, FailTransport)})
}

// dropped counts the end of a connection the probe did not ask for; one
// the hub closed for a quota pauses the target, as a refused send does.
func (s *heldSlot) dropped() {
	reason, at := s.conn.Dropped()
	failure := FailClosed
	if quota, throttled := throttledBy(s.conn.Err()); throttled {
		failure = FailThrottled
		s.h.runner().pause().Throttle(quota, 0, time.Now())
		if w := s.h.win.now(); w != nil {
			w.tracker.throttle(quota)
		}
	}
	s.conn = nil
	clientconn.ForgetIdleConnections()
	s.open.Store(false)
	s.droppedAt.Store(at.UnixNano())
	rn := s.h.runner()
	if w := s.h.win.now(); w != nil {
		w.tracker.dropped(reason)
	}
	rn.Recorder.Event(Event{Kind: ConnectionFailed, Reason: failure})
	rn.Recorder.Event(Event{Kind: ConnectionDropped, Reason: reason, Duration: at.Sub(s.opened)})
	rn.Recorder.Event(Event{Kind: ConnectionClosed})
}

// reconnected counts the first message after a drop: the connection is
// back, after took from the drop.
func (s *heldSlot) reconnected(after time.Duration) {
	if w := s.h.win.now(); w != nil {
		w.tracker.reconnected()
	}
	s.h.runner().Recorder.Event(Event{Kind: Reconnected, Duration: after})
}

// end closes the slot's connection and lets a move that waits for it go
// on.
func (s *heldSlot) end(ctx context.Context) {
	s.close(ctx)
	if s.moved != nil {
		close(s.moved)
		s.moved = nil
	}
}

// close ends the slot's connection as the probe's own close.
func (s *heldSlot) close(ctx context.Context) {
	if s.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = s.conn.Close(ctx)
	s.conn = nil
	s.open.Store(false)
	s.h.runner().Recorder.Event(Event{Kind: ConnectionClosed})
}

// sendDue makes every send due by now, from next on, and returns when the
// one after is due. A send that falls due while the target is paused is
// counted as throttled and never made; one while the connection is away
// waits for it (pendingSend).
func (s *heldSlot) sendDue(ctx context.Context, next time.Time) time.Time {
	rn := s.h.runner()
	for now := time.Now(); !now.Before(next); now = time.Now() {
		s.sendOne(ctx, rn, now.Sub(next), stamp()-now.Sub(next).Microseconds())
		next = next.Add(rn.Scenario.SendInterval)
	}
	return next
}

// sendOne sends the slot's next message of the current report, lag late,
// stamped us.
func (s *heldSlot) sendOne(ctx context.Context, rn *Runner, lag time.Duration, us int64) {
	w := s.h.win.now()
	if w == nil || s.i >= w.slots || s.h.stopping.Load() {
		return
	}
	if reason, held := rn.pause().Holding(time.Now()); held {
		w.tracker.throttle(reason)
		w.tracker.paused.Add(1)
		return
	}
	id := w.tracker.ids.Assign(s.i)
	w.tracker.sentMessage(1, lag)
	p := pendingSend{w: w, id: id, us: us}
	if s.conn == nil || !s.send(ctx, rn, p) {
		w.queued(id)
		s.pending = append(stillDue(s.pending, rn.Scenario.LossTimeout), p)
	}
}

// stillDue drops the pending sends older than the loss timeout: they
// count as lost whatever comes.
func stillDue(pending []pendingSend, lossTimeout time.Duration) []pendingSend {
	i := 0
	for i < len(pending) && sinceStamp(pending[i].us) > lossTimeout {
		i++
	}
	return pending[i:]
}

// send sends p on the slot's connection; it reports whether the
// connection took it. A throttled send pauses the target, and is not sent
// again: it will count lost.
func (s *heldSlot) send(ctx context.Context, rn *Runner, p pendingSend) bool {
	echo, ok := s.conn.(wire.Echoer)
	if !ok {
		return true // Kinds refuses a wire without echo for held
	}
	s.buf = p.w.payloads.AppendAt(s.buf[:0], "", "", p.id, p.us)
	err := echo.Echo(ctx, s.buf)
	if reason, throttled := throttledBy(err); throttled {
		rn.pause().Throttle(reason, 0, time.Now())
		p.w.tracker.throttle(reason)
		return true
	}
	return err == nil || errors.Is(err, context.Canceled)
}

// flush sends what fell due while the slot was away, oldest first; what
// is older than the loss timeout, or whose report closed, is left to count
// as lost.
func (s *heldSlot) flush(ctx context.Context) {
	rn := s.h.runner()
	pending := s.pending
	s.pending = nil
	for i, p := range pending {
		if p.w.tracker.closed.Load() || sinceStamp(p.us) > rn.Scenario.LossTimeout {
			continue
		}
		if s.conn == nil || !s.send(ctx, rn, p) {
			s.pending = append(s.pending, pending[i:]...)
			return
		}
	}
}
