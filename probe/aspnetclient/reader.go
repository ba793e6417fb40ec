package aspnetclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/aspnet"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// readLoop is the connection's only reader. A transport that drops is
// reconnected; the connection ends when that fails, the server
// disconnects it or sends an error, or its bytes make no sense.
func (c *Conn) readLoop() {
	var err error
	for err == nil {
		err = c.readOne()
		if err != nil && c.mendable(err) {
			err = c.reconnect(err)
		}
	}
	c.teardown(c.describeReadError(err))
}

// readOne reads and handles one message within the server timeout.
func (c *Conn) readOne() error {
	t := c.transport()
	t.setReadDeadline(time.Now().Add(c.s.serverTimeout))
	b, err := t.next()
	if err != nil {
		return err
	}
	c.live.MarkRead()
	_, err = c.handleFrame(b)
	return err
}

// handleEnvelope applies one envelope: the cursor, the groups token,
// the messages; it reports whether it was the init message. The 2.4.3
// clients ignore the disconnect flag (D), which servers stopped sending
// with 2.1; a probe takes it, as 1.x clients did, for the server ending
// the connection.
func (c *Conn) handleEnvelope(e *aspnet.Envelope) (init bool, err error) {
	if e.Error != "" {
		return false, &clientconn.CloseError{Message: "server error: " + e.Error}
	}
	c.tmu.Lock()
	if e.Cursor != "" {
		c.cursor = e.Cursor
	}
	if e.GroupsToken != "" {
		c.groupsToken = e.GroupsToken
	}
	c.tmu.Unlock()
	c.longPollDelay = c.s.pollDelay(e)
	for _, m := range e.Messages {
		if err := c.dispatch(m); err != nil {
			return false, err
		}
	}
	switch {
	case e.Disconnect:
		return false, &clientconn.CloseError{Message: "the server disconnected the connection", Disconnected: true}
	case e.Reconnect:
		return false, fmt.Errorf("%w: the server asked the client to reconnect", errDropped)
	}
	return e.HasMessages && e.Initialized, nil
}

// mendable reports whether err is the transport dropping, which the
// classic clients mend with a reconnect, rather than the server ending
// the connection or breaking the protocol.
func (c *Conn) mendable(err error) bool {
	var wsClose *websocket.CloseError
	return !c.state.Ended() && (errors.Is(err, errDropped) || errors.As(err, &wsClose))
}

// reconnect reopens the transport with the reconnect request, within the
// server's disconnect timeout (or the handshake timeout, when negotiate
// gave none). A WebSocket that dropped is replaced under the write turn,
// so no send goes to the dead one.
func (c *Conn) reconnect(dropped error) error {
	wait := c.s.disconnectTimeout
	if wait <= 0 {
		wait = c.o.HandshakeTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	old := c.transport()
	t, err := c.open(ctx, old.name(), true)
	if err != nil {
		return &ReconnectError{Dropped: dropped, Err: err}
	}
	old.close()
	c.tmu.Lock()
	c.t = t
	c.tmu.Unlock()
	if c.state.Ended() { // Close ran meanwhile
		t.close()
		return nil
	}
	if c.o.OnReconnected != nil {
		c.o.OnReconnected()
	}
	return nil
}

// describeReadError turns what stopped the reader into the connection's
// end reason.
func (c *Conn) describeReadError(err error) error {
	var closeErr *clientconn.CloseError
	var re *ReconnectError
	var te *TransportError
	switch {
	case err == nil, c.state.Ended() && c.state.Err() == nil:
		return nil
	case errors.As(err, &closeErr), errors.As(err, &re), errors.As(err, &te),
		errors.Is(err, ErrProtocol), errors.Is(err, clientconn.ErrServerTimeout):
		return err
	case clientconn.IsTimeout(err):
		return fmt.Errorf("%w: nothing received for %s", clientconn.ErrServerTimeout, c.s.serverTimeout)
	}
	return fmt.Errorf("probe: connection lost: %w", err)
}

// teardown runs on the read goroutine when it stops: it settles the end
// reason, closes the transport and fails every pending invocation.
func (c *Conn) teardown(reason error) {
	c.state.End(reason)
	c.transport().close()
	c.keepAlive.Stop()
	c.posts.stop()
	c.mu.Lock()
	calls := c.calls
	c.calls, c.drained = nil, true
	c.mu.Unlock()
	pendingErr := c.state.ClosedErr()
	for _, done := range calls {
		done <- callResult{err: pendingErr}
	}
	c.state.Finish()
}
