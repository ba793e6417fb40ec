// Package clientconn holds what hubprobe's client connections share,
// signalrclient.Conn (ASP.NET Core SignalR), aspnetclient.Conn (classic
// ASP.NET SignalR) and webpubsubclient.Conn (Web PubSub): the
// Settings both Options embed with the defaults they share, the WebSocket
// dialer built from those settings, a connection's end state, its write
// turn and its orderly close, the keep-alive (whose timer also measures
// the transport's round trip), the half-open check (Liveness, which times
// the round trip's pongs), the PhaseClock that splits a connect into its
// phases, the pooled buffers, the error shape of a refused HTTP response,
// the failures both report (connect phases, closes, throttling) and the
// Observer all tell what crosses the wire and how long it took, and the
// HTTP helpers of the SignalR clients. No client imports another.
//
// What is on the per-message path of every client (the write turn, the
// keep-alive's stamp, the buffers) is kept to plain fields and small
// functions the compiler inlines; State lives inside the connection's own
// struct rather than behind a pointer.
package clientconn

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// State is how a connection ends: the first reason wins, closing is
// closed when it starts to end and done when it has ended. It also holds
// the connection's write turn. Call Init before use; the zero value is not
// ready.
type State struct {
	mu       sync.Mutex
	err      error
	endedAt  time.Time
	closing  chan struct{} // closed when the connection starts to end
	done     chan struct{} // closed when it has ended and the socket is closed
	writeSem chan struct{} // a mutex that a context can give up on
}

// Init makes the channels. It is a method rather than a constructor so
// State can sit by value in the connection's struct.
func (s *State) Init() {
	s.closing = make(chan struct{})
	s.done = make(chan struct{})
	s.writeSem = make(chan struct{}, 1)
}

// End records why the connection ends and closes Closing; the first reason
// wins. It reports whether this call was the first.
func (s *State) End(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Ended() {
		return false
	}
	s.err, s.endedAt = err, time.Now()
	close(s.closing)
	return true
}

// EndedAt is when the connection started to end; zero while it is open.
func (s *State) EndedAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endedAt
}

// Ended reports whether the connection has started to end. It takes no
// lock: callers that hold their own connection lock may ask.
func (s *State) Ended() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// Err is the reason End recorded: nil while the connection is open and
// after a clean end.
func (s *State) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// ClosedErr is what calls on an ended connection return: ErrClosed, joined
// with the reason the connection ended if there was one.
func (s *State) ClosedErr() error {
	if err := s.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return ErrClosed
}

// Closing is closed when the connection starts to end.
func (s *State) Closing() <-chan struct{} { return s.closing }

// Done is closed once the connection has ended and its socket is closed.
func (s *State) Done() <-chan struct{} { return s.done }

// Finish closes Done. Only the read goroutine calls it, once, after End.
func (s *State) Finish() { close(s.done) }

// WaitDone waits for Done and returns Err, or gives up with ctx.
func (s *State) WaitDone(ctx context.Context) error {
	select {
	case <-s.done:
		return s.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// EndsWithin waits up to d for the connection to start ending and reports
// whether it did.
func (s *State) EndsWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.closing:
		return true
	case <-t.C:
		return false
	}
}
