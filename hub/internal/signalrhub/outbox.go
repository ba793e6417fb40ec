package signalrhub

import (
	"sync"

	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/signalr"
)

// outbox collects what the reader goroutine answers its own client while
// more input is already buffered, and is written just before the reader
// would wait for input. A lone invocation is thus answered at once, without
// a goroutine hand-off, and a burst with one write for many replies.
type outbox struct {
	buf  *[]byte // borrowed from outboxPool only while non-empty
	msgs int     // hub messages in buf (a handshake response is not one)
}

const outboxCap = 4096

var outboxPool = sync.Pool{New: func() any {
	b := make([]byte, 0, outboxCap)
	return &b
}}

func (o *outbox) grab() *[]byte {
	if o.buf == nil {
		o.buf = outboxPool.Get().(*[]byte)
	}
	return o.buf
}

func (o *outbox) appendMessage(cd *codec, m *signalr.Message) error {
	p := o.grab()
	b, err := cd.appendMessage(*p, m)
	if err != nil {
		return err
	}
	*p = b
	o.msgs++
	return nil
}

func (o *outbox) appendFrame(b []byte) {
	p := o.grab()
	*p = append(*p, b...)
	o.msgs++
}

func (o *outbox) appendHandshake(b []byte) {
	p := o.grab()
	*p = append(*p, b...)
}

func (o *outbox) size() int {
	if o.buf == nil {
		return 0
	}
	return len(*o.buf)
}

func (o *outbox) bytes() []byte { return *o.buf }

func (o *outbox) release() {
	if o.buf == nil {
		return
	}
	if cap(*o.buf) <= transport.MaxPooledBuffer {
		*o.buf = (*o.buf)[:0]
		outboxPool.Put(o.buf)
	}
	o.buf, o.msgs = nil, 0
}

// reply queues m for the client in the outbox; reader goroutine only.
func (c *conn) reply(m *signalr.Message) {
	if err := c.outbox.appendMessage(c.cd, m); err != nil {
		c.log.Error().Err(err).Msg("cannot encode message")
	}
}

// flushBeforeRead writes the outbox unless more input is already buffered.
func (c *conn) flushBeforeRead() error {
	if c.outbox.size() == 0 || c.t.Buffered() > 0 {
		return nil
	}
	return c.flush()
}

func (c *conn) flushIfFull() error {
	if c.outbox.size() < transport.MaxBatchBytes {
		return nil
	}
	return c.flush()
}

// flush writes the outbox as one transport message. Once the connection is
// closing the outbox is dropped and the reader told to stop.
func (c *conn) flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.flushLocked()
}

// registerAndFlush makes the connection addressable and writes the
// handshake response in one hold of wmu. From register on, fan-out reaches
// the writer goroutine, and the client takes whatever record comes first
// for the handshake response. Registering first keeps the id valid by the
// time the client, having read OnConnected, hands it out.
func (c *conn) registerAndFlush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	// Handshaken before the roster can see the connection: a close that
	// CloseAll requests from then on carries its Close message, and the
	// writer waits for wmu, so the handshake answer still goes out first.
	c.handshaken.Store(true)
	if !c.hub.register(c) {
		return errClosing
	}
	return c.writeOutboxLocked()
}

// flushLocked is flush with wmu held.
func (c *conn) flushLocked() error {
	if c.closed.Load() && c.outbox.size() > 0 {
		c.outbox.release()
		return errClosing
	}
	return c.writeOutboxLocked()
}

// writeOutboxLocked writes what the outbox holds, with wmu held.
func (c *conn) writeOutboxLocked() error {
	if c.outbox.size() == 0 {
		return nil
	}
	defer c.outbox.release()
	if err := c.t.WriteMessage(c.binary.Load(), c.outbox.bytes()); err != nil {
		return err
	}
	c.lastWrite.Store(c.hub.Now())
	c.hub.Metrics.Sent.Add(float64(c.outbox.msgs))
	return nil
}
