package signalrhub

import (
	"fmt"
	"time"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
)

// writeLoop writes what other goroutines queue for this client (fan-out,
// streams, keep-alives), batching whatever has piled up, and on close the
// rest of the queue, the Close message and the transport's own close.
func (c *conn) writeLoop() {
	defer close(c.writerDone)
	defer func() {
		if r := recover(); r != nil {
			c.hub.recovered(c, r)
			c.requestClose(nil)
			c.t.Abort()
		}
	}()
	for {
		select {
		case f := <-c.queue:
			if err := c.writeQueuedLocked(f); err != nil {
				c.log.Debug().Err(err).Msg("write failed")
				c.requestClose(nil)
				c.t.Abort()
				return
			}
		case <-c.closing:
			c.wmu.Lock()
			c.writeFinal()
			c.wmu.Unlock()
			return
		}
	}
}

func (c *conn) writeQueuedLocked(f *frame) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeQueued(f)
}

// writeFinal runs with wmu held.
func (c *conn) writeFinal() {
	deadline := time.Now().Add(core.CloseGrace)
	_ = c.t.SetWriteDeadline(deadline)
	for f := c.nextQueued(0); f != nil; f = c.nextQueued(0) {
		if err := c.writeQueued(f); err != nil {
			c.t.Abort()
			return
		}
	}
	if c.closeMsg != nil {
		err := c.t.WriteMessage(c.binary.Load(), c.closeMsg.b)
		c.closeMsg.release()
		if err != nil {
			c.t.Abort()
			return
		}
		c.hub.Metrics.Sent.Inc()
	}
	c.t.CloseGracefully(deadline)
}

// writeQueued writes first together with whatever else is queued (up to
// transport.MaxBatchBytes) as one transport message, releasing every frame. It runs
// with wmu held.
func (c *conn) writeQueued(first *frame) error {
	c.notePing(first)
	next := c.nextQueued(len(first.b))
	if next == nil { // the common case: nothing to join, no copy
		err := c.t.WriteMessage(c.binary.Load(), first.b)
		first.release()
		return c.wrote(1, err)
	}
	bp := transport.GetBatch()
	batch := append((*bp)[:0], first.b...) //nolint:gocritic // the pooled buffer is filled from its start; *bp takes it back on release
	first.release()
	n := 1
	for f := next; f != nil; f = c.nextQueued(len(batch)) {
		c.notePing(f)
		batch = append(batch, f.b...)
		f.release()
		n++
	}
	err := c.t.WriteMessage(c.binary.Load(), batch)
	*bp = batch
	transport.PutBatch(bp)
	return c.wrote(n, err)
}

func (c *conn) notePing(f *frame) {
	if f.static && c.cd != nil && f == c.hub.pings[c.cd.index] {
		c.pingQueued.Store(false)
	}
}

func (c *conn) wrote(n int, err error) error {
	if err != nil {
		return fmt.Errorf("writing to client: %w", err)
	}
	c.lastWrite.Store(c.hub.Now())
	c.hub.Metrics.Sent.Add(float64(n))
	return nil
}

func (c *conn) nextQueued(size int) *frame {
	if size >= transport.MaxBatchBytes {
		return nil
	}
	select {
	case f := <-c.queue:
		return f
	default:
		return nil
	}
}
