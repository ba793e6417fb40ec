package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/probe"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// errWriteAborted ends a connection whose write was cut off by its
// caller's context: a half-written frame cannot be taken back.
var errWriteAborted = errors.New("webpubsub client: write aborted by its context; the stream is unusable")

// writeErrorGrace is how long a failed socket write waits for the read
// goroutine to give the better reason (a disconnected message may be
// waiting unread).
const writeErrorGrace = 250 * time.Millisecond

// writeFrame encodes f and writes it as one text frame. Writers take
// turns; ctx bounds both the wait for the turn and the write itself. A
// frame that cannot be encoded (invalid JSON data) is the caller's error
// and leaves the connection alone.
func (c *Conn) writeFrame(ctx context.Context, f *webpubsub.Frame) error {
	bp := getBuf()
	defer putBuf(bp)
	b, err := webpubsub.AppendFrame((*bp)[:0], f)
	*bp = b
	if err != nil {
		return fmt.Errorf("webpubsub client: %w", err)
	}
	if err := c.acquireWrite(ctx); err != nil {
		return err
	}
	defer func() { <-c.writeSem }()
	return c.writeLocked(ctx, b)
}

func (c *Conn) acquireWrite(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case c.writeSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closing:
		return c.closedErr()
	}
	select {
	case <-c.closing:
		<-c.writeSem
		return c.closedErr()
	default:
		return nil
	}
}

// writeLocked writes b while holding the write turn. If ctx ends during
// the write, the socket is closed to unblock it and the connection fails.
func (c *Conn) writeLocked(ctx context.Context, b []byte) error {
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, c.abortWriteFn)
	}
	if c.writeTimeout > 0 {
		_ = c.ws.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	}
	err := c.ws.WriteMessage(websocket.TextMessage, b)
	if stop != nil && !stop() {
		return fmt.Errorf("%w: %w", errWriteAborted, ctx.Err())
	}
	if err != nil {
		c.endOnWriteError(err)
		return c.closedErr()
	}
	c.obs.BytesSent(len(b))
	c.markWritten()
	return nil
}

// endOnWriteError ends the connection after a failed write. A socket
// write usually fails because the service closed the connection, and the
// read goroutine is about to say how; "broken pipe" is the reason only if
// the reader has nothing to say.
func (c *Conn) endOnWriteError(err error) {
	if !isTimeout(err) {
		t := time.NewTimer(writeErrorGrace)
		defer t.Stop()
		select {
		case <-c.closing:
			return
		case <-t.C:
		}
	}
	if c.writeTimeout > 0 && isTimeout(err) {
		c.fail(fmt.Errorf("%w: a write did not finish within %s; the service stopped reading", probe.ErrServerTimeout, c.writeTimeout))
		return
	}
	c.fail(fmt.Errorf("webpubsub client: write failed: %w", err))
}

func (c *Conn) abortWrite() { c.fail(errWriteAborted) }

// writeInternal writes a frame the connection sends on its own behalf.
func (c *Conn) writeInternal(f *webpubsub.Frame) error {
	ctx, cancel := context.WithTimeout(context.Background(), internalWriteTimeout)
	defer cancel()
	return c.writeFrame(ctx, f)
}

func (c *Conn) markWritten() { c.lastWrite.Store(int64(time.Since(c.started))) }

var pingFrame = webpubsub.Frame{Kind: webpubsub.KindPing}

// keepAliveTick sends a ping frame when nothing was written for a whole
// KeepAliveInterval, and re-arms itself for the next moment that can
// happen. A timer rather than a goroutine keeps idle connections cheap.
func (c *Conn) keepAliveTick() {
	c.mu.Lock()
	t, ended := c.keepAlive, c.ended
	c.mu.Unlock()
	if ended {
		return
	}
	idle := time.Since(c.started) - time.Duration(c.lastWrite.Load())
	if idle < c.keepAliveInterval {
		t.Reset(c.keepAliveInterval - idle)
		return
	}
	// A failed ping either ended the connection (teardown stops the
	// timer) or lost the write turn to a stuck writer; try again later.
	ping := pingFrame
	_ = c.writeInternal(&ping)
	t.Reset(c.keepAliveInterval)
}
