package signalrclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// CheckAlive sends a WebSocket ping and waits up to wait for its pong
// (clientconn.Liveness). A peer that neither answers nor sends a byte
// stopped reading: the connection is half-open, it ends with an error
// wrapping clientconn.ErrServerTimeout, and CheckAlive returns that. A
// peer whose bytes are still arriving when wait is up is alive, its pong
// held up behind them. If ctx ends first, CheckAlive returns ctx.Err() and
// leaves the connection alone. One check at a time per connection.
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
	return c.live.Check(ctx, wait, &c.state, ws.ping, c.fail)
}

// measureRoundTrip measures the transport's round trip once without
// waiting (clientconn.KeepAliveConn): a WebSocket ping whose pong the read
// goroutine times, or the HTTP transports' cheap request on a goroutine
// of its own, which the transport's context ends with the connection.
func (c *Conn) measureRoundTrip() {
	switch t := c.t.(type) {
	case *wsTransport:
		c.live.PingRoundTrip(t.ping, clientconn.InternalWriteTimeout)
	case roundTripper:
		go c.observeRoundTrip(t)
	}
}

// roundTripper is an HTTP transport that can time a request to the hub.
type roundTripper interface{ roundTrip() (time.Duration, error) }

func (c *Conn) observeRoundTrip(t roundTripper) {
	if d, err := t.roundTrip(); err == nil {
		c.obs.RoundTrip(d)
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
		reason := fmt.Errorf("%w: a send got no answer within %s; the connection is half-open", clientconn.ErrStalled, wait)
		c.fail(reason)
		return reason
	}
	return c.state.ClosedErr()
}

// keepAliveHooks is the connection as its keep-alive's timer calls it: a
// conversion of the *Conn, where method values would be two objects per
// connection.
type keepAliveHooks Conn

func (h *keepAliveHooks) KeepAlivePing()    { (*Conn)(h).sendKeepAlivePing() }
func (h *keepAliveHooks) MeasureRoundTrip() { (*Conn)(h).measureRoundTrip() }
