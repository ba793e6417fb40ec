package aspnetclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"

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
	_, err = c.handle(b)
	return err
}

// handle applies one message from the server: the cursor, the groups
// token, the messages; it reports whether it was the init message.
func (c *Conn) handle(b []byte) (init bool, err error) {
	e, err := decodeEnvelope(b)
	if err != nil {
		return false, err
	}
	if e.ResultID != nil && e.Cursor == nil {
		return false, c.dispatch(b) // a bare hub result
	}
	if e.Error != "" {
		return false, &clientconn.CloseError{Message: "server error: " + e.Error}
	}
	c.tmu.Lock()
	if e.Cursor != nil {
		c.cursor = *e.Cursor
	}
	if e.GroupsToken != nil {
		c.groupsToken = *e.GroupsToken
	}
	c.tmu.Unlock()
	for _, m := range e.Messages {
		if err := c.dispatch(m); err != nil {
			return false, err
		}
	}
	switch {
	case e.disconnected():
		return false, &clientconn.CloseError{Message: "the server disconnected the connection"}
	case e.shouldReconnect():
		return false, fmt.Errorf("%w: the server asked the client to reconnect", errDropped)
	}
	return e.initialized(), nil
}

// dispatch handles one hub message: a call to the client, or an answer
// to an invocation. Progress is not awaited by any invocation of the
// probe's.
func (c *Conn) dispatch(raw json.RawMessage) error {
	var m hubMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%w: invalid hub message: %v", ErrProtocol, err)
	}
	if id, ok := m.resultID(); ok && m.Method == "" {
		if !present(m.Progress) {
			c.settle(id, &m)
		}
		return nil
	}
	if h := c.handler(m.Method); h != nil && m.Method != "" {
		h(m.Args)
	}
	return nil
}

// settle hands an answer to the Invoke waiting for it; answers to Send
// and late answers find nobody and are dropped.
func (c *Conn) settle(id string, m *hubMessage) {
	c.mu.Lock()
	done, ok := c.calls[id]
	delete(c.calls, id)
	c.mu.Unlock()
	if !ok {
		return
	}
	if m.Error != nil {
		done <- callResult{err: &InvocationError{Message: *m.Error}}
		return
	}
	done <- callResult{result: m.Result}
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
