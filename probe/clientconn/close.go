package clientconn

import (
	"context"
	"time"
)

const (
	// CloseWait is how long an orderly close may take, its last message,
	// the transport's goodbye and the wait for the server's answer
	// together, so a writer stuck on a dead socket cannot hold Close up.
	CloseWait = time.Second
	// GoodbyeWait bounds the short writes no caller waits for: the answer
	// to a server's close or bad bytes after reading stopped (a close
	// frame, long polling's DELETE), and the pong to a server's ping.
	GoodbyeWait = 250 * time.Millisecond
)

// CloseSteps are what a connection's orderly close does, in order.
type CloseSteps struct {
	// Last, when set, writes the protocol's own goodbye (SignalR's Close
	// message) while the write turn is still open.
	Last func(ctx context.Context)
	// Shutdown starts the transport's closing handshake by deadline (a
	// WebSocket close frame 1000).
	Shutdown func(deadline time.Time)
	// CloseTransport closes the socket, which ends the read goroutine.
	CloseTransport func()
}

// CloseInOrder ends the connection cleanly within CloseWait: steps.Last,
// then End, the transport's shutdown, a wait for the server to close
// (for Done), and the transport closed. It returns nil, or, when the
// connection had already ended (or ended meanwhile, as when Last failed),
// Err once Done, or ctx's error if ctx ends first.
func (s *State) CloseInOrder(ctx context.Context, steps CloseSteps) error {
	if s.Ended() {
		return s.WaitDone(ctx)
	}
	budget, cancel := context.WithTimeout(ctx, CloseWait)
	defer cancel()
	if steps.Last != nil {
		steps.Last(budget)
	}
	if !s.End(nil) {
		steps.CloseTransport()
		return s.WaitDone(ctx)
	}
	deadline, _ := budget.Deadline()
	steps.Shutdown(deadline)
	select {
	case <-s.done:
	case <-budget.Done():
	}
	steps.CloseTransport()
	<-s.done
	return nil
}
