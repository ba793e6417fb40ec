package hub

import (
	"fmt"
	"time"
)

// writeLoop owns every write to the transport: queued frames in batches,
// then on close the remaining queue, the Close message and the transport's
// own close.
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
			c.wmu.Lock()
			err := c.writeFrames(f, true)
			c.wmu.Unlock()
			if err != nil {
				c.log.Debug().Err(err).Msg("write failed")
				c.requestClose(nil)
				c.t.Abort()
				return
			}
		case <-c.closing:
			c.writeFinal()
			return
		}
	}
}

func (c *conn) writeFinal() {
	deadline := time.Now().Add(closeGrace)
	_ = c.t.SetWriteDeadline(deadline)
	for f := c.nextQueued(0); f != nil; f = c.nextQueued(0) {
		if err := c.writeFrames(f, true); err != nil {
			c.t.Abort()
			return
		}
	}
	if c.closeMsg != nil {
		if err := c.writeFrames(c.closeMsg, false); err != nil {
			c.t.Abort()
			return
		}
	}
	c.t.CloseGracefully(deadline)
}

// writeFrames writes first, and with batch also whatever else is queued (up
// to maxBatchBytes), as one transport message. It releases every frame.
func (c *conn) writeFrames(first *frame, batch bool) (err error) {
	w, err := c.t.NextWriter(c.binary.Load())
	if err != nil {
		first.release()
		return err
	}
	written, size := 0, 0
	for f := first; f != nil; {
		if f == c.hub.ping {
			c.pingQueued.Store(false)
		}
		_, err = w.Write(f.b)
		size += len(f.b)
		counted := !f.handshake
		f.release()
		c.unwritten.Add(-1)
		if err != nil {
			break
		}
		if counted {
			written++
		}
		if f = nil; batch {
			f = c.nextQueued(size)
		}
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing to client: %w", err)
	}
	c.lastWrite.Store(c.hub.now())
	c.hub.metrics.sent.Add(float64(written))
	return nil
}

func (c *conn) nextQueued(size int) *frame {
	if size >= maxBatchBytes {
		return nil
	}
	select {
	case f := <-c.queue:
		return f
	default:
		return nil
	}
}

func (c *conn) tryWriteDirect(f *frame) bool {
	if c.unwritten.Load() != 0 || !c.wmu.TryLock() {
		return false
	}
	defer c.wmu.Unlock()
	if c.unwritten.Load() != 0 || c.closed.Load() {
		return false
	}
	f.retain()
	c.unwritten.Add(1)
	if err := c.writeFrames(f, false); err != nil {
		c.requestClose(nil)
		c.t.Abort()
	}
	return true
}
