package signalrclient

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// readLoop is the connection's only reader. It ends the connection when
// reading fails, the server sends Close, or the bytes make no sense.
func (c *Conn) readLoop() {
	err := c.parseBuffered() // records that shared a frame with the handshake
	if err == nil {
		// Idle connections hold no read buffer: release it now rather than
		// after the first message, or every connection keeps one through the
		// whole connect phase.
		c.releaseReadBuf(false)
	}
	for err == nil {
		err = c.readFrame()
	}
	c.teardown(c.describeReadError(err))
}

// readFrame reads one data frame, parsing records as they complete.
func (c *Conn) readFrame() error {
	if err := c.t.setReadDeadline(time.Now().Add(c.serverTimeout)); err != nil {
		return err
	}
	typ, r, err := c.t.nextFrame()
	if err != nil {
		return err
	}
	if typ != c.frameType {
		return fmt.Errorf("%w: %s frame where %s frames were expected", signalr.ErrProtocol, frameTypeName(typ), frameTypeName(c.frameType))
	}
	total, unparsed := 0, 0
	defer func() { c.obs.BytesReceived(total) }()
	for {
		n, rerr := c.fill(r)
		if n > 0 {
			c.live.MarkRead()
		}
		total += n
		unparsed += n
		if unparsed > 0 && (rerr != nil || unparsed >= parseChunk) {
			unparsed = 0
			if err := c.parseBuffered(); err != nil {
				return err
			}
			// Dispatch may have waited on a slow stream reader; that time
			// is not the server's silence.
			if err := c.t.setReadDeadline(time.Now().Add(c.serverTimeout)); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			c.releaseReadBuf(false)
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// parseBuffered dispatches every complete record in rbuf and keeps the
// partial tail, which may not outgrow MaxMessageSize. rbuf is reused at
// once: messages may alias it, so dispatch detaches what it hands on and
// handlers copy what they keep.
func (c *Conn) parseBuffered() error {
	if len(c.rbuf) == 0 {
		return nil
	}
	rest, err := c.proto.ParseMessages(c.rbuf, c.dispatchFn)
	if err != nil {
		return err
	}
	c.rbuf = c.rbuf[:copy(c.rbuf, rest)]
	if int64(len(c.rbuf)) > c.maxMessageSize {
		return fmt.Errorf("%w: record larger than %d bytes", signalr.ErrProtocol, c.maxMessageSize)
	}
	return nil
}

// fill reads once from r into the free end of rbuf, growing it when needed.
func (c *Conn) fill(r io.Reader) (int, error) {
	if c.rbufp == nil {
		c.rbufp = clientconn.GetBuf()
		c.rbuf = (*c.rbufp)[:0]
	}
	if cap(c.rbuf)-len(c.rbuf) < minReadSpace {
		grown := make([]byte, len(c.rbuf), 2*cap(c.rbuf)+minReadSpace)
		copy(grown, c.rbuf)
		c.rbuf = grown
	}
	n, err := r.Read(c.rbuf[len(c.rbuf):cap(c.rbuf)])
	c.rbuf = c.rbuf[:len(c.rbuf)+n]
	return n, err
}

// releaseReadBuf returns rbuf to the pool when it holds nothing (or when
// force is set), so idle connections hold no read buffer of their own.
func (c *Conn) releaseReadBuf(force bool) {
	if c.rbufp == nil || (len(c.rbuf) > 0 && !force) {
		return
	}
	*c.rbufp = c.rbuf
	clientconn.PutBuf(c.rbufp)
	c.rbufp, c.rbuf = nil, nil
}

// describeReadError turns what stopped the reader into the connection's
// end reason.
func (c *Conn) describeReadError(err error) error {
	var closeErr *clientconn.CloseError
	var transportErr *TransportError
	var wsClose *websocket.CloseError
	switch {
	case errors.As(err, &closeErr), errors.Is(err, signalr.ErrProtocol), errors.Is(err, clientconn.ErrServerTimeout):
		return err
	case errors.As(err, &transportErr) && !clientconn.IsTimeout(err):
		return err
	case clientconn.IsTimeout(err):
		return fmt.Errorf("%w: nothing received for %s", clientconn.ErrServerTimeout, c.serverTimeout)
	case errors.As(err, &wsClose):
		return fmt.Errorf("probe: server closed the WebSocket without a Close message: %w", err)
	}
	return fmt.Errorf("probe: connection lost: %w", err)
}

// teardown runs on the read goroutine when it stops: it settles the end
// reason, closes the socket and fails everything still pending.
func (c *Conn) teardown(reason error) {
	c.state.End(reason)
	c.t.goodbye(reason)
	c.t.close()
	c.releaseReadBuf(true)
	c.keepAlive.Stop()
	c.guard.Stop()
	c.mu.Lock()
	calls, streams := c.calls, c.streams
	c.calls, c.streams, c.drained = nil, nil, true
	c.mu.Unlock()
	pendingErr := c.state.ClosedErr()
	for _, cl := range calls {
		cl.done <- callResult{err: pendingErr}
	}
	for _, s := range streams {
		s.finish(pendingErr)
	}
	c.state.Finish()
}
