package aspnetclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

var errWriteAborted = errors.New("probe: write abandoned mid-message; connection closed")

// Send invokes method on the hub and does not wait for its answer, which
// the read goroutine drops. Each argument must be one JSON value.
func (c *Conn) Send(ctx context.Context, method string, args ...json.RawMessage) error {
	return c.writeInvocation(ctx, method, args, c.nextID.Add(1))
}

// Invoke calls method and waits for its answer: the result (nil for a
// void method), an *InvocationError when the hub reports an error, or
// ctx's error.
func (c *Conn) Invoke(ctx context.Context, method string, args ...json.RawMessage) (json.RawMessage, error) {
	n := c.nextID.Add(1)
	id := strconv.FormatUint(n, 10)
	done := make(chan callResult, 1)
	c.mu.Lock()
	if c.drained || c.state.Ended() {
		c.mu.Unlock()
		return nil, c.state.ClosedErr()
	}
	c.calls[id] = done
	c.mu.Unlock()
	if err := c.writeInvocation(ctx, method, args, n); err != nil {
		c.forget(id)
		return nil, err
	}
	select {
	case r := <-done:
		return r.result, r.err
	case <-ctx.Done():
		c.forget(id)
		return nil, ctx.Err()
	}
}

func (c *Conn) forget(id string) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

// writeInvocation encodes {"H","M","A","I"} and writes it while holding
// the write turn: a WebSocket message, or on the HTTP transports a send
// POST started (see poster). A WebSocket write that ctx cuts off has
// already failed the connection.
func (c *Conn) writeInvocation(ctx context.Context, method string, args []json.RawMessage, id uint64) error {
	if err := c.state.AcquireWrite(ctx); err != nil {
		return err
	}
	defer c.state.ReleaseWrite()
	bp := clientconn.GetBuf()
	defer clientconn.PutBuf(bp)
	*bp = appendInvocation((*bp)[:0], c.hub, method, args, id)
	err := c.transport().write(ctx, *bp)
	switch {
	case errors.Is(err, errWriteAborted), errors.Is(err, errNoSendSlot):
		return err
	case err != nil:
		c.endOnWriteError(err)
		return c.state.ClosedErr()
	}
	c.keepAlive.MarkWritten()
	return nil
}

func (c *Conn) abortWrite() { c.fail(errWriteAborted) }

// endOnWriteError ends the connection after a failed write. A socket
// write usually fails because the server closed the connection, and the
// read goroutine is about to say how; "broken pipe" is the reason only if
// the reader has nothing to say.
func (c *Conn) endOnWriteError(err error) {
	var te *TransportError
	if !errors.As(err, &te) && c.state.EndsWithin(clientconn.WriteErrorGrace) {
		return
	}
	if c.o.WriteTimeout > 0 && clientconn.IsTimeout(err) {
		err = fmt.Errorf("%w: a write did not finish within %s; the server stopped reading", clientconn.ErrStalled, c.o.WriteTimeout)
	}
	c.fail(err)
}
