package signalrhub

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/signalr"
)

// Bounds of ServerPush.
const (
	maxPushCount           = 100000
	maxPushesPerConnection = 32
)

// serverPush starts ServerPush(p, n): the caller receives n messages
// RecordLatency(p, i), i = 0 … n-1, in order. The call returns at once; the
// pushes follow from a goroutine, so the caller's other invocations are
// still read meanwhile.
func (c *conn) serverPush(m *signalr.Message) ([]byte, string) {
	if len(m.Arguments) != 2 {
		return nil, invokeError(m, fmt.Sprintf("expected 2 arguments (payload, count), got %d", len(m.Arguments)))
	}
	if !c.cd.isObject(m.Arguments[0]) {
		return nil, invokeError(m, "the payload is not an object")
	}
	n, ok := c.cd.integer(m.Arguments[1])
	if !ok || n < 1 || n > maxPushCount {
		return nil, invokeError(m, fmt.Sprintf("the count is not an integer from 1 to %d", maxPushCount))
	}
	if c.pushes.Add(1) > maxPushesPerConnection {
		c.pushes.Add(-1)
		return nil, invokeError(m, fmt.Sprintf("more than %d pushes at once", maxPushesPerConnection))
	}
	// The argument may point into the read buffer, which the reader reuses.
	payload := append(json.RawMessage(nil), m.Arguments[0]...)
	c.hub.Conns.Add(1) // the connection's own count keeps this from racing Close
	go c.runPush(payload, int(n), c.hub.Now())
	return nil, ""
}

// runPush queues the batch, waiting for the writer when the queue is full:
// a client that reads slowly slows its own push down and is not dropped.
// It stops early when the connection closes.
func (c *conn) runPush(payload json.RawMessage, n int, arrived int64) {
	defer c.hub.Conns.Done()
	defer c.pushes.Add(-1)
	defer func() {
		if r := recover(); r != nil {
			c.hub.recovered(c, r)
		}
	}()
	if wait := arrived + c.hub.DeliveryDelay() - c.hub.Now(); wait > 0 && !c.sleep(time.Duration(wait)) {
		return
	}
	var index []byte
	for i := range n {
		index = strconv.AppendInt(index[:0], int64(i), 10)
		m := signalr.Message{Type: signalr.InvocationType, Target: "RecordLatency", Arguments: []json.RawMessage{payload, index}}
		f, err := encodeFrame(c.cd, &m)
		if err != nil {
			c.log.Error().Err(err).Msg("cannot encode message")
			return
		}
		queued := c.enqueueOwn(f)
		f.release()
		if !queued {
			return
		}
	}
}

// sleep waits d unless the connection closes first.
func (c *conn) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.closing:
		return false
	}
}
