package aspnetclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// pingTimeout bounds one ping request: a server that takes longer to
// answer it measures nothing of the network.
const pingTimeout = 5 * time.Second

var errNoRoundTrip = errors.New("probe: no round trip: the ping was not written, or not answered")

// sendPing is the keep-alive: the ping request the JavaScript client
// sends every pingInterval, which keeps the server's session alive.
func (c *Conn) sendPing() { _, _ = c.ping() }

// measureRoundTrip measures the transport's round trip once without
// waiting (clientconn.KeepAliveConn): a WebSocket ping to its pong, timed
// by the read goroutine; on the HTTP transports the ping request, which
// the server answers before any hub code runs, on a goroutine of its own
// (pingTimeout bounds it).
func (c *Conn) measureRoundTrip() {
	if ws, ok := c.transport().(*wsTransport); ok {
		c.live.PingRoundTrip(ws.ping, clientconn.InternalWriteTimeout)
		return
	}
	go c.observePing()
}

func (c *Conn) observePing() {
	if d, err := c.ping(); err == nil {
		c.o.Observer.RoundTrip(d)
	}
}

// ping sends GET /ping on the connection's HTTP pool and times it from
// the request written to the answer's first byte, so neither a new
// connection's dial nor the writing is in it.
func (c *Conn) ping() (time.Duration, error) {
	var wrote, answered atomic.Int64
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest:         func(httptrace.WroteRequestInfo) { wrote.Store(int64(time.Since(began))) },
		GotFirstResponseByte: func() { answered.Store(int64(time.Since(began))) },
	})
	u := c.s.requestURL("ping", "")
	res, err := c.request(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	c.o.Observer.HTTPResponse("ping", res.StatusCode)
	clientconn.DiscardBody(res)
	w, a := wrote.Load(), answered.Load()
	if res.StatusCode != http.StatusOK || w == 0 || a < w {
		return 0, errNoRoundTrip
	}
	return time.Duration(a - w), nil
}

// CheckAlive makes sure the server still answers: over WebSockets a ping
// whose pong (or any byte) must come within wait (clientconn.Liveness),
// else the connection is half-open and ends with an error wrapping
// clientconn.ErrServerTimeout; over the HTTP transports the ping request.
func (c *Conn) CheckAlive(ctx context.Context, wait time.Duration) error {
	if c.state.Ended() {
		return c.state.ClosedErr()
	}
	if ws, ok := c.transport().(*wsTransport); ok {
		return c.live.Check(ctx, wait, &c.state, ws.ping, c.fail)
	}
	done := make(chan error, 1)
	go func() { _, err := c.ping(); done <- err }()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, errNoRoundTrip) {
			return err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		reason := fmt.Errorf("%w: no answer to a ping request within %s; the connection is half-open", clientconn.ErrStalled, wait)
		c.fail(reason)
		return reason
	}
}

// keepAliveHooks is the connection as its keep-alive's timer calls it: a
// conversion of the *Conn, where method values would be two objects per
// connection.
type keepAliveHooks Conn

func (h *keepAliveHooks) KeepAlivePing()    { (*Conn)(h).sendPing() }
func (h *keepAliveHooks) MeasureRoundTrip() { (*Conn)(h).measureRoundTrip() }
