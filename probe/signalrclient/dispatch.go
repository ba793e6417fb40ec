package signalrclient

import (
	"fmt"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// dispatch handles one message from the server on the read goroutine.
func (c *Conn) dispatch(m *signalr.Message) error {
	switch m.Type {
	case signalr.InvocationType:
		c.onInvocation(m)
	case signalr.StreamItemType:
		m.Detach() // the item outlives the read buffer in its stream
		c.onStreamItem(m)
	case signalr.CompletionType:
		m.Detach() // the result goes to the caller's goroutine
		c.onCompletion(m)
	case signalr.StreamInvocationType:
		c.replyError(m.InvocationID, "the client does not stream results to the server")
	case signalr.CloseType:
		return &clientconn.CloseError{Message: m.Error, AllowReconnect: m.AllowReconnect}
	}
	// Ping only proves the server is alive, which reading already showed.
	// CancelInvocation has nothing to cancel: the client runs no streams
	// for the server. Ack and Sequence belong to stateful reconnect, which
	// is never requested.
	return nil
}

func (c *Conn) onInvocation(m *signalr.Message) {
	h := c.handler(m.Target)
	if h != nil {
		h(m.Arguments)
	}
	if m.InvocationID == "" {
		return
	}
	if h == nil {
		c.replyError(m.InvocationID, "the client has no handler for "+m.Target)
		return
	}
	_ = c.writeInternal(&signalr.Message{Type: signalr.CompletionType, InvocationID: m.InvocationID})
}

func (c *Conn) replyError(invocationID, msg string) {
	_ = c.writeInternal(&signalr.Message{Type: signalr.CompletionType, InvocationID: invocationID, Error: msg, HasError: true})
}

// onStreamItem delivers an item to its stream. An item for a plain
// invocation fails that invocation; an item for an id no longer pending
// (cancelled, timed out) is dropped.
func (c *Conn) onStreamItem(m *signalr.Message) {
	c.mu.Lock()
	s := c.streams[m.InvocationID]
	cl := c.calls[m.InvocationID]
	if cl != nil {
		delete(c.calls, m.InvocationID)
	}
	c.mu.Unlock()
	switch {
	case s != nil:
		s.push(m.Item, c.state.Closing())
	case cl != nil:
		cl.done <- callResult{err: fmt.Errorf("%w: stream item for a non-streaming invocation", signalr.ErrProtocol)}
	}
}

// onCompletion settles the invocation or stream with id, if still pending.
func (c *Conn) onCompletion(m *signalr.Message) {
	c.mu.Lock()
	cl := c.calls[m.InvocationID]
	s := c.streams[m.InvocationID]
	delete(c.calls, m.InvocationID)
	delete(c.streams, m.InvocationID)
	c.mu.Unlock()
	var err error
	if m.HasError {
		err = &InvocationError{Message: m.Error}
	}
	if cl != nil {
		cl.done <- callResult{result: m.Result, err: err}
	}
	if s != nil {
		if err == nil && m.Result != nil {
			err = fmt.Errorf("%w: completion of a stream carries a result", signalr.ErrProtocol)
		}
		s.finish(err)
	}
}
