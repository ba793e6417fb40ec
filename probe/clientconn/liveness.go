package clientconn

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/internal/grid"
)

// Liveness tells a half-open WebSocket from a slow one, for every client.
// Every WebSocket peer answers pings while it reads, whatever its hub
// layer does, so no pong, and no byte from the peer either, within a wait
// means it stopped reading; its socket stays open, and reads would wait for
// the server timeout to find out. The read goroutine stamps every read
// (MarkRead) and hands pongs to OnPong. Call Start before the first read.
//
// It also times the round trip of every ping of the connection's own
// (PingRoundTrip's and Check's): a pong is answered by the peer's
// WebSocket layer, which the hub's application code never sees, so the
// time from ping to pong is the transport's round trip and nothing else.
type Liveness struct {
	lastRead atomic.Int64 // when bytes last arrived, as grid.Now()
	obs      RoundTripObserver

	mu   sync.Mutex
	seq  uint64        // the pings, numbered
	want string        // payload of the ping awaiting its pong; "" if none
	sent time.Duration // when that ping went out, as grid.Now()
	seen chan struct{} // closed when a check's pong arrives; nil if no check waits
}

// RoundTripObserver is told the round trips a Liveness times; an Observer
// is one.
type RoundTripObserver interface {
	RoundTrip(d time.Duration)
}

// Start sets obs, which, when not nil, is told the round trip of every
// ping of ours that is answered, on the read goroutine; it must not block.
// Held as an interface rather than a method value, it costs the
// connection no object of its own.
func (l *Liveness) Start(obs RoundTripObserver) { l.obs = obs }

// MarkRead records that bytes arrived.
func (l *Liveness) MarkRead() { l.lastRead.Store(int64(grid.Now())) }

// OnPong is the connection's pong handler. Pongs that answer no ping of
// ours awaiting its pong (unsolicited heartbeats, late answers) are
// ignored.
func (l *Liveness) OnPong(data string) error {
	l.mu.Lock()
	if l.want == "" || data != l.want {
		l.mu.Unlock()
		return nil
	}
	rtt := grid.Now() - l.sent
	l.want = ""
	if l.seen != nil {
		close(l.seen)
		l.seen = nil
	}
	l.mu.Unlock()
	if l.obs != nil {
		l.obs.RoundTrip(rtt)
	}
	return nil
}

// PingRoundTrip writes a ping with ping, bounded by wait, and arms OnPong
// to time its pong. While a check waits for its own pong it does nothing:
// that pong is timed instead. A failed write is left to the connection's
// other machinery (the next write, the read deadline) to notice.
func (l *Liveness) PingRoundTrip(ping func(payload []byte, deadline time.Time) error, wait time.Duration) {
	l.mu.Lock()
	if l.seen != nil {
		l.mu.Unlock()
		return
	}
	payload := l.armLocked()
	l.mu.Unlock()
	_ = ping(payload, time.Now().Add(wait))
}

// armLocked numbers a new ping, the one OnPong waits for from now on, and
// returns its payload; l.mu is held.
func (l *Liveness) armLocked() []byte {
	l.seq++
	l.want = strconv.FormatUint(l.seq, 10)
	l.sent = grid.Now()
	return []byte(l.want)
}

// Check writes a WebSocket ping with ping and waits up to wait for its
// pong. It returns nil when the pong came, or when bytes were still
// arriving as wait ran out (the pong is queued behind them: late, not
// missing); ctx.Err() when ctx ended first; s's closed error when the
// connection ended meanwhile. Otherwise the peer is gone: Check ends the
// connection with end and returns the reason it gave (not s's error, which
// may name an end that came first), wrapping ErrServerTimeout when the
// peer stopped reading. One check at a time per connection.
func (l *Liveness) Check(ctx context.Context, wait time.Duration, s *State, ping func(payload []byte, deadline time.Time) error, end func(error)) error {
	if s.Ended() {
		return s.ClosedErr()
	}
	payload, answered := l.expect()
	defer l.forget()
	pinged := grid.Now()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	if err := ping(payload, time.Now().Add(wait)); err != nil {
		if !IsTimeout(err) {
			return endWith(end, fmt.Errorf("probe: ping failed: %w", err))
		}
		return endWith(end, fmt.Errorf("%w: a WebSocket ping could not be written within %s; the connection is half-open", ErrStalled, wait))
	}
	select {
	case <-answered:
		return nil
	case <-s.Closing():
		return s.ClosedErr()
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		if time.Duration(l.lastRead.Load()) > pinged {
			return nil
		}
		return endWith(end, fmt.Errorf("%w: no answer to a WebSocket ping within %s; the connection is half-open", ErrStalled, wait))
	}
}

func endWith(end func(error), reason error) error {
	end(reason)
	return reason
}

// expect arms OnPong for a new ping and returns the ping's payload and a
// channel closed when its pong arrives.
func (l *Liveness) expect() ([]byte, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	payload := l.armLocked()
	l.seen = make(chan struct{})
	return payload, l.seen
}

func (l *Liveness) forget() {
	l.mu.Lock()
	l.want, l.seen = "", nil
	l.mu.Unlock()
}
