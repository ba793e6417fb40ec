package clientconn

import (
	"context"
	"fmt"
	"time"
)

// WriteErrorGrace is how long a failed socket write waits for the read
// goroutine to give the better reason: a write usually fails because the
// server closed the connection, and the reader is about to say how (the
// server's goodbye may be waiting unread).
const WriteErrorGrace = 250 * time.Millisecond

// InternalWriteTimeout bounds a write a connection makes on its own
// behalf (a keep-alive or round-trip ping, a reply, an ack), which no
// caller's context bounds.
const InternalWriteTimeout = 10 * time.Second

// AcquireWrite waits for the write turn: writers take turns, and ctx or
// the connection's end gives up the wait. Hand the turn back with
// ReleaseWrite.
func (s *State) AcquireWrite(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case s.writeSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closing:
		return s.ClosedErr()
	}
	select {
	case <-s.closing:
		<-s.writeSem
		return s.ClosedErr()
	default:
		return nil
	}
}

// ReleaseWrite hands the write turn to the next writer.
func (s *State) ReleaseWrite() { <-s.writeSem }

// WriteGuard cuts off a write its context gives up on.
type WriteGuard struct{ stop func() bool }

// GuardWrite runs abort if ctx ends before Release. abort must unblock the
// write by closing the transport, and end the connection: a half-written
// frame cannot be taken back. A context that cannot end costs nothing.
func GuardWrite(ctx context.Context, abort func()) WriteGuard {
	if ctx.Done() == nil {
		return WriteGuard{}
	}
	return WriteGuard{stop: context.AfterFunc(ctx, abort)}
}

// Release disarms the guard once the write returned. It returns nil, or
// aborted joined with ctx's error when abort ran.
func (g WriteGuard) Release(ctx context.Context, aborted error) error {
	if g.stop == nil {
		return nil
	}
	return g.disarm(ctx, aborted)
}

func (g WriteGuard) disarm(ctx context.Context, aborted error) error {
	if g.stop() {
		return nil
	}
	return fmt.Errorf("%w: %w", aborted, ctx.Err())
}
