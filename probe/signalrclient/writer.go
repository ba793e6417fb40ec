package signalrclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// errWriteAborted ends a connection whose write was cut off by its caller's
// context: a half-written frame cannot be taken back.
var errWriteAborted = errors.New("probe: write aborted by its context; the stream is unusable")

// writeMessage encodes m and writes it as one frame. Writers take turns;
// ctx bounds both the wait for the turn and the write itself.
func (c *Conn) writeMessage(ctx context.Context, m *signalr.Message) error {
	if err := c.state.AcquireWrite(ctx); err != nil {
		return err
	}
	defer c.state.ReleaseWrite()
	bp := clientconn.GetBuf()
	defer clientconn.PutBuf(bp)
	b, err := c.encode((*bp)[:0], m)
	*bp = b
	if err != nil {
		return err
	}
	return c.writeFrame(ctx, b)
}

// encode calls JSONProtocol directly so that m, and the arguments it
// points to, can stay on the caller's stack; through the interface they
// would escape to the heap on every message.
func (c *Conn) encode(dst []byte, m *signalr.Message) ([]byte, error) {
	if _, ok := c.proto.(signalr.JSONProtocol); ok {
		return signalr.JSONProtocol{}.AppendMessage(dst, m)
	}
	escaping := *m
	return c.proto.AppendMessage(dst, &escaping)
}

// writeFrame writes b while holding the write turn. If ctx ends during the
// write, the transport is closed to unblock it and the connection fails.
func (c *Conn) writeFrame(ctx context.Context, b []byte) error {
	if err := c.guard.Begin(ctx); err != nil {
		return err
	}
	err := c.t.writeFrame(b)
	if aborted := c.guard.End(ctx, errWriteAborted); aborted != nil {
		return aborted
	}
	if err != nil {
		c.endOnWriteError(err)
		return c.state.ClosedErr()
	}
	c.keepAlive.MarkWritten()
	return nil
}

// endOnWriteError ends the connection after a failed write. A socket write
// usually fails because the server closed the connection, and the read
// goroutine is about to say how (a Close message may be waiting unread);
// "broken pipe" is the reason only if the reader has nothing to say.
func (c *Conn) endOnWriteError(err error) {
	var te *TransportError
	socketErr := !clientconn.IsTimeout(err) && !errors.Is(err, clientconn.ErrServerTimeout) && !errors.As(err, &te)
	if socketErr && c.state.EndsWithin(clientconn.WriteErrorGrace) {
		return
	}
	c.fail(c.describeWriteError(err))
}

func (c *Conn) describeWriteError(err error) error {
	var te *TransportError
	if errors.Is(err, clientconn.ErrServerTimeout) || errors.As(err, &te) {
		return err // a failed POST, already explained
	}
	if c.writeTimeout > 0 && clientconn.IsTimeout(err) {
		return fmt.Errorf("%w: a write did not finish within %s; the server stopped reading", clientconn.ErrStalled, c.writeTimeout)
	}
	return fmt.Errorf("probe: write failed: %w", err)
}

func (c *Conn) abortWrite() { c.fail(errWriteAborted) }

// writeInternal writes a message the connection sends on its own behalf.
func (c *Conn) writeInternal(m *signalr.Message) error {
	ctx, cancel := context.WithTimeout(context.Background(), clientconn.InternalWriteTimeout)
	defer cancel()
	return c.writeMessage(ctx, m)
}

// sendKeepAlivePing is the keep-alive's ping: a Ping message.
func (c *Conn) sendKeepAlivePing() { _ = c.writeInternal(&pingMessage) }
