package clientconn

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Liveness tells a half-open WebSocket from a slow one, for either client.
// Every WebSocket peer answers pings while it reads, whatever its hub
// layer does, so no pong, and no byte from the peer either, within a wait
// means it stopped reading; its socket stays open, and reads would wait for
// the server timeout to find out. The read goroutine stamps every read
// (MarkRead) and hands pongs to OnPong. Call Start before the first read.
type Liveness struct {
	started  time.Time
	lastRead atomic.Int64 // nanoseconds since started when bytes last arrived

	mu   sync.Mutex
	seq  uint64        // the checks' pings, numbered
	want string        // payload of the ping awaiting its pong
	seen chan struct{} // closed when that pong arrives; nil if none awaited
}

// Start sets the clock the read stamps count from.
func (l *Liveness) Start() { l.started = time.Now() }

// MarkRead records that bytes arrived.
func (l *Liveness) MarkRead() { l.lastRead.Store(int64(time.Since(l.started))) }

// OnPong is the connection's pong handler. Pongs that answer no ping of
// ours (unsolicited heartbeats, late answers) are ignored.
func (l *Liveness) OnPong(data string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen != nil && data == l.want {
		close(l.seen)
		l.seen = nil
	}
	return nil
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
	pinged := time.Since(l.started)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	if err := ping(payload, time.Now().Add(wait)); err != nil {
		if !IsTimeout(err) {
			return endWith(end, fmt.Errorf("probe: ping failed: %w", err))
		}
		return endWith(end, fmt.Errorf("%w: a WebSocket ping could not be written within %s; the connection is half-open", ErrServerTimeout, wait))
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
		return endWith(end, fmt.Errorf("%w: no answer to a WebSocket ping within %s; the connection is half-open", ErrServerTimeout, wait))
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
	l.seq++
	l.want = strconv.FormatUint(l.seq, 10)
	l.seen = make(chan struct{})
	return []byte(l.want), l.seen
}

func (l *Liveness) forget() {
	l.mu.Lock()
	l.seen = nil
	l.mu.Unlock()
}
