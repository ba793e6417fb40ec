package probe

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/internal/clientconn"
)

// CheckAlive sends a WebSocket ping and waits up to wait for its pong.
// Every WebSocket server answers pings while it reads, whatever its hub
// layer does, so no pong, and no byte from the peer either, means it stopped
// reading: the connection is half-open, and reads would wait for
// ServerTimeout to find out. Then the connection ends with an error wrapping
// clientconn.ErrServerTimeout, which CheckAlive returns. A peer whose bytes are still
// arriving when wait is up is alive, its pong held up behind them. If ctx ends first, CheckAlive returns ctx.Err() and leaves the
// connection alone. One check at a time per connection.
//
// Server-sent events and long polling have no pings: there CheckAlive
// sends a hub Ping message and waits for the server to answer its POST.
func (c *Conn) CheckAlive(ctx context.Context, wait time.Duration) error {
	if c.state.Ended() {
		return c.state.ClosedErr()
	}
	ws, ok := c.t.(*wsTransport)
	if !ok {
		return c.checkAliveBySend(ctx, wait)
	}
	payload, answered := c.expectPong()
	defer c.forgetPong()
	pinged := time.Since(c.started)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	if err := ws.ws.WriteControl(websocket.PingMessage, payload, time.Now().Add(wait)); err != nil {
		if !clientconn.IsTimeout(err) {
			c.fail(fmt.Errorf("probe: ping failed: %w", err))
			return c.state.ClosedErr()
		}
		return c.halfOpen(fmt.Errorf("%w: a WebSocket ping could not be written within %s; the connection is half-open", clientconn.ErrServerTimeout, wait))
	}
	select {
	case <-answered:
		return nil
	case <-c.state.Closing():
		return c.state.ClosedErr()
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		if time.Duration(c.lastRead.Load()) > pinged {
			// The pong is queued behind frames still arriving (a link
			// slower than the messages sent on it): late, not missing.
			return nil
		}
		return c.halfOpen(fmt.Errorf("%w: no answer to a WebSocket ping within %s; the connection is half-open", clientconn.ErrServerTimeout, wait))
	}
}

// checkAliveBySend writes a Ping and waits until the server has answered
// the POST that carried it (and every send queued before it).
func (c *Conn) checkAliveBySend(ctx context.Context, wait time.Duration) error {
	h, ok := c.t.(interface{ sender() *postSender })
	if !ok {
		return fmt.Errorf("probe: CheckAlive: %w for transport %s", errors.ErrUnsupported, c.t.name())
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	err := c.writeMessage(wctx, &pingMessage)
	if err == nil {
		err = h.sender().flush(wctx.Done())
	}
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case wctx.Err() != nil:
		return c.halfOpen(fmt.Errorf("%w: a send got no answer within %s; the connection is half-open", clientconn.ErrServerTimeout, wait))
	}
	return c.state.ClosedErr()
}

func (c *Conn) halfOpen(err error) error {
	c.fail(err)
	return c.Err()
}

// expectPong arms the pong handler for a new ping and returns the ping's
// payload and a channel closed when its pong arrives.
func (c *Conn) expectPong() ([]byte, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pingSeq++
	c.pongWant = strconv.FormatUint(c.pingSeq, 10)
	c.pongSeen = make(chan struct{})
	return []byte(c.pongWant), c.pongSeen
}

func (c *Conn) forgetPong() {
	c.mu.Lock()
	c.pongSeen = nil
	c.mu.Unlock()
}

// onPong runs on the read goroutine. Pongs that answer no ping of ours
// (unsolicited heartbeats, late answers) are ignored.
func (c *Conn) onPong(data string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pongSeen != nil && data == c.pongWant {
		close(c.pongSeen)
		c.pongSeen = nil
	}
	return nil
}
