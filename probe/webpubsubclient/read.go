package webpubsubclient

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// minReadSpace is the smallest free space handed to one Read.
const minReadSpace = 1024

// readLoop is the connection's only reader. It ends the connection when
// reading fails, the service says disconnected, or the bytes make no sense.
func (c *Conn) readLoop() {
	var err error
	for err == nil {
		err = c.readFrame()
	}
	c.teardown(c.describeReadError(err))
}

func (c *Conn) readFrame() error {
	bp, err := c.nextFrame(time.Now().Add(c.serverTimeout))
	if err != nil {
		return err
	}
	defer clientconn.PutBuf(bp)
	return c.handle(*bp)
}

// nextFrame reads one whole text frame into a pooled buffer; gorilla's
// read limit bounds it. The caller returns the buffer with
// clientconn.PutBuf.
func (c *Conn) nextFrame(deadline time.Time) (*[]byte, error) {
	if err := c.ws.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	typ, r, err := c.ws.NextReader()
	if err != nil {
		return nil, err
	}
	if typ != websocket.TextMessage {
		return nil, protocolError("a binary frame; the JSON subprotocols send text frames")
	}
	bp := clientconn.GetBuf()
	b, err := readAll((*bp)[:0], r, &c.live)
	*bp = b
	c.obs.BytesReceived(len(b))
	if err != nil {
		clientconn.PutBuf(bp)
		return nil, err
	}
	return bp, nil
}

// readAll appends everything r holds to b, growing it as needed, and
// stamps live (when set) on every read that brought bytes: a frame still
// arriving is a peer still alive.
func readAll(b []byte, r io.Reader, live *clientconn.Liveness) ([]byte, error) {
	for {
		if cap(b)-len(b) < minReadSpace {
			grown := make([]byte, len(b), 2*cap(b)+minReadSpace)
			copy(grown, b)
			b = grown
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if n > 0 && live != nil {
			live.MarkRead()
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// handle decodes and dispatches one frame on the read goroutine.
func (c *Conn) handle(data []byte) error {
	f := &c.frame
	if err := c.dec.Decode(data, f); err != nil {
		// The service may add frame types, sources and system events; the
		// official client skips those, and so does this one.
		if errors.Is(err, webpubsub.ErrUnknownType) {
			return nil
		}
		return fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	switch f.Kind {
	case webpubsub.KindAck:
		return c.onAck(f)
	case webpubsub.KindGroupMessage, webpubsub.KindServerMessage:
		return c.onMessage(f)
	case webpubsub.KindDisconnected:
		return &clientconn.CloseError{Message: limit(f.Message, maxQuoted), Disconnected: true}
	case webpubsub.KindPong, webpubsub.KindConnected:
		// A pong only proves the service alive, which reading showed. A
		// later connected message follows a recovery, which this client
		// never attempts; it changes nothing here.
		return nil
	}
	return protocolError("the service sent a %v frame, which only clients send", f.Kind)
}

func (c *Conn) onMessage(f *webpubsub.Frame) error {
	m := Message{Group: f.Group, FromUserID: f.FromUserID, DataType: f.DataType, Data: f.Data}
	if c.reliable {
		if f.SequenceID == 0 {
			return protocolError("a %v without a sequenceId on %s", f.Kind, c.protocol)
		}
		// Acknowledged on receipt, before the handler runs, as the
		// protocol asks. Messages at or below the largest id seen are
		// delivered all the same: what was delivered twice is for the
		// caller to count.
		c.seq.received(f.SequenceID)
		m.SequenceID = f.SequenceID
	}
	h := c.onServer
	if f.Kind == webpubsub.KindGroupMessage {
		h = c.onGroup
	}
	if h != nil {
		h(m)
	}
	return nil
}

// onAck settles the request waiting for f's ackId. An ack for an id this
// connection never sent ends it; a late one (its request gave up) or a
// repeated one is ignored, as the official client ignores acks it is not
// waiting for.
func (c *Conn) onAck(f *webpubsub.Frame) error {
	if f.AckID == 0 || f.AckID > c.lastAckID.Load() {
		return protocolError("an ack for ackId %d, which this connection never sent", f.AckID)
	}
	c.mu.Lock()
	p, waiting := c.acks[f.AckID]
	delete(c.acks, f.AckID)
	c.mu.Unlock()
	if !waiting {
		return nil
	}
	var err error
	if !f.AckOK() {
		err = &AckError{Op: p.op, Name: f.Error.Name, Message: f.Error.Message}
	}
	p.done <- err // buffered: never blocks the reader
	return nil
}

// describeReadError turns what stopped the reader into the connection's
// end reason.
func (c *Conn) describeReadError(err error) error {
	var closeErr *clientconn.CloseError
	var wsClose *websocket.CloseError
	switch {
	case errors.As(err, &closeErr), errors.Is(err, ErrProtocol):
		return err
	case errors.Is(err, websocket.ErrReadLimit):
		return protocolError("a frame over the %d-byte limit", c.maxMessageSize)
	case clientconn.IsTimeout(err):
		return fmt.Errorf("%w: nothing received for %s", clientconn.ErrServerTimeout, c.serverTimeout)
	case errors.As(err, &wsClose) && wsClose.Code != websocket.CloseAbnormalClosure:
		return closedByService(wsClose)
	}
	return fmt.Errorf("webpubsub client: connection lost: %w", err)
}

// teardown runs on the read goroutine when it stops: it settles the end
// reason, closes the socket and stops the timers. Requests waiting for an
// ack see closing and fail.
func (c *Conn) teardown(reason error) {
	if c.state.End(reason) {
		c.goodbye(reason)
	}
	_ = c.ws.Close()
	c.keepAlive.Stop()
	c.guard.Stop()
	c.mu.Lock()
	c.acks = nil
	c.mu.Unlock()
	c.seq.stop()
	c.state.Finish()
}

// goodbye answers a disconnected message or bad bytes with a close frame,
// so the service sees an orderly end rather than a reset.
func (c *Conn) goodbye(reason error) { clientconn.SendGoodbye(c.ws, reason, ErrProtocol) }
