package webpubsubclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// errWriteAborted ends a connection whose write was cut off by its
// caller's context: a half-written frame cannot be taken back.
var errWriteAborted = errors.New("webpubsub client: write aborted by its context; the stream is unusable")

// writeFrame encodes f and writes it as one text frame. Writers take
// turns; ctx bounds both the wait for the turn and the write itself. A
// frame that cannot be encoded (invalid JSON data) is the caller's error
// and leaves the connection alone.
func (c *Conn) writeFrame(ctx context.Context, f *webpubsub.Frame) error {
	bp := clientconn.GetBuf()
	defer clientconn.PutBuf(bp)
	b, err := webpubsub.AppendFrame((*bp)[:0], f)
	*bp = b
	if err != nil {
		return fmt.Errorf("webpubsub client: %w", err)
	}
	if err := c.state.AcquireWrite(ctx); err != nil {
		return err
	}
	defer c.state.ReleaseWrite()
	return c.writeLocked(ctx, b)
}

// writeLocked writes b while holding the write turn. If ctx ends during
// the write, the socket is closed to unblock it and the connection fails.
func (c *Conn) writeLocked(ctx context.Context, b []byte) error {
	if err := c.guard.Begin(ctx); err != nil {
		return err
	}
	if c.writeTimeout > 0 {
		_ = c.ws.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	}
	err := c.ws.WriteMessage(websocket.TextMessage, b)
	if aborted := c.guard.End(ctx, errWriteAborted); aborted != nil {
		return aborted
	}
	if err != nil {
		c.endOnWriteError(err)
		return c.state.ClosedErr()
	}
	c.obs.BytesSent(len(b))
	c.keepAlive.MarkWritten()
	return nil
}

// endOnWriteError ends the connection after a failed write. A socket
// write usually fails because the service closed the connection, and the
// read goroutine is about to say how; "broken pipe" is the reason only if
// the reader has nothing to say.
func (c *Conn) endOnWriteError(err error) {
	if !clientconn.IsTimeout(err) && c.state.EndsWithin(clientconn.WriteErrorGrace) {
		return
	}
	if c.writeTimeout > 0 && clientconn.IsTimeout(err) {
		c.fail(fmt.Errorf("%w: a write did not finish within %s; the service stopped reading", clientconn.ErrStalled, c.writeTimeout))
		return
	}
	c.fail(fmt.Errorf("webpubsub client: write failed: %w", err))
}

func (c *Conn) abortWrite() { c.fail(errWriteAborted) }

// writeInternal writes a frame the connection sends on its own behalf.
func (c *Conn) writeInternal(f *webpubsub.Frame) error {
	ctx, cancel := context.WithTimeout(context.Background(), clientconn.InternalWriteTimeout)
	defer cancel()
	return c.writeFrame(ctx, f)
}

var pingFrame = webpubsub.Frame{Kind: webpubsub.KindPing}

// sendKeepAlivePing is the keep-alive's ping: a ping frame.
func (c *Conn) sendKeepAlivePing() {
	ping := pingFrame
	_ = c.writeInternal(&ping)
}
