package signalrclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// handshake sends the handshake request and waits for the server's first
// record, within timeout and ctx. Records that arrive behind it stay in
// rbuf for the read goroutine.
func (c *Conn) handshake(ctx context.Context, timeout time.Duration) error {
	// Closing the transport is the only way to interrupt a blocked read.
	stop := context.AfterFunc(ctx, c.t.close)
	err := c.exchangeHandshake(ctx, timeout)
	if !stop() {
		return clientconn.NewConnectError(clientconn.PhaseHandshake, ctx.Err())
	}
	return err
}

func (c *Conn) exchangeHandshake(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.sendHandshake(ctx, deadline); err != nil {
		return handshakeSendError(err)
	}
	sent := time.Now()
	if err := c.t.setReadDeadline(deadline); err != nil {
		return clientconn.NewConnectError(clientconn.PhaseHandshake, err)
	}
	err := c.readHandshakeResponse()
	if clientconn.IsTimeout(err) {
		return &clientconn.ConnectError{Phase: clientconn.PhaseTimeout,
			Err: fmt.Errorf("handshake: no response after %s: %w", time.Since(sent).Round(time.Millisecond), err)}
	}
	if err != nil {
		return clientconn.NewConnectError(clientconn.PhaseHandshake, err)
	}
	return nil
}

func (c *Conn) sendHandshake(ctx context.Context, deadline time.Time) error {
	bp := clientconn.GetBuf()
	defer clientconn.PutBuf(bp)
	*bp = signalr.AppendHandshakeRequest((*bp)[:0], c.proto)
	return c.t.writeHandshake(ctx, *bp, deadline)
}

// handshakeSendError keeps the status of a refused handshake POST, so a
// throttled connection (429) is classified like a refused negotiate.
func handshakeSendError(err error) *clientconn.ConnectError {
	ce := clientconn.NewConnectError(clientconn.PhaseHandshake, fmt.Errorf("sending handshake: %w", err))
	var te *TransportError
	if errors.As(err, &te) {
		ce.StatusCode, ce.Body = te.StatusCode, te.Body
	}
	return ce
}

// readHandshakeResponse reads frames until the first record is complete
// and returns the server's refusal, if any. The handshake record may come
// in a frame of either type: it is JSON text whatever the hub protocol.
func (c *Conn) readHandshakeResponse() error {
	for {
		_, r, err := c.t.nextFrame()
		if err != nil {
			return err
		}
		if err := c.readWholeFrame(r); err != nil {
			return err
		}
		record, rest, ok := signalr.SplitHandshake(c.rbuf)
		if !ok {
			continue
		}
		refusal := signalr.ParseHandshakeResponse(record)
		c.rbuf = c.rbuf[:copy(c.rbuf, rest)]
		return refusal
	}
}

// readWholeFrame appends one frame to rbuf, bounded by MaxMessageSize.
func (c *Conn) readWholeFrame(r io.Reader) error {
	total := 0
	defer func() { c.obs.BytesReceived(total) }()
	for {
		n, err := c.fill(r)
		total += n
		if int64(len(c.rbuf)) > c.maxMessageSize {
			return fmt.Errorf("%w: handshake response larger than %d bytes", signalr.ErrProtocol, c.maxMessageSize)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
