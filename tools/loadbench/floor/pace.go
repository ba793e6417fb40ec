package floor

import (
	"context"
	"io"
	"strconv"
	"time"

	"github.com/gorilla/websocket"
)

// pace sends open-loop, the way hubprobe's pacer does: send i is due at
// start + i×interval/connections, connections take turns, and a late send
// goes out at once with its lateness recorded rather than being skipped.
func (c *client) pace(ctx context.Context, conns []*websocket.Conn) {
	n := int64(len(conns))
	interval := int64(c.cfg.Interval)
	total := (int64(c.cfg.Window)*n + interval - 1) / interval
	failed := make([]bool, n)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	start := time.Now()
	for i := int64(0); i < total; {
		due := time.Duration(i * interval / n)
		if wait := due - time.Since(start); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			continue
		}
		c.maxLag = max(c.maxLag, time.Since(start)-due)
		if k := i % n; !failed[k] {
			failed[k] = !c.send(conns[k])
		}
		i++
	}
}

// send stamps the shared payload and writes it; WriteMessage copies it into
// the connection's buffer, so one payload serves every connection.
func (c *client) send(ws *websocket.Conn) bool {
	stamp := time.Since(c.epoch).Nanoseconds()
	head := strconv.AppendInt(c.payload[:0], stamp, 10)
	copy(c.payload[StampLen-len(head):], head)
	for i := range StampLen - len(head) {
		c.payload[i] = '0'
	}
	if err := ws.WriteMessage(websocket.TextMessage, c.payload); err != nil {
		return false
	}
	c.sent.Add(1)
	return true
}

// read times every echoed frame from its stamp and discards the rest
// without copying it out of the connection's buffer.
func (c *client) read(ws *websocket.Conn) {
	head := make([]byte, StampLen)
	for {
		_, r, err := ws.NextReader()
		if err != nil {
			return
		}
		if _, err := io.ReadFull(r, head); err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return
		}
		stamp, err := strconv.ParseInt(string(head), 10, 64)
		if err != nil {
			return
		}
		c.record(time.Since(c.epoch) - time.Duration(stamp))
	}
}

func (c *client) record(rtt time.Duration) {
	c.mu.Lock()
	_ = c.hist.RecordValue(max(rtt.Microseconds(), 1))
	c.mu.Unlock()
	c.received.Add(1)
}

// drain waits, at most the loss timeout, for replies still in flight.
func (c *client) drain(ctx context.Context) {
	deadline := time.Now().Add(c.cfg.LossTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for c.received.Load() < c.sent.Load() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (c *client) report(conns int) Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	secs := func(q float64) float64 { return float64(c.hist.ValueAtQuantile(q)) / 1e6 }
	sent, received := c.sent.Load(), c.received.Load()
	return Report{
		Connections: conns, Sent: sent, Received: received, Lost: max(sent-received, 0),
		Latency:        Latency{P50: secs(50), P90: secs(90), P99: secs(99), Max: float64(c.hist.Max()) / 1e6},
		MaxSendLagSecs: c.maxLag.Seconds(),
	}
}
