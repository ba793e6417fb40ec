package scenarios

import (
	"context"
	"time"

	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"github.com/hubprobe/hubprobe/probe/webpubsubclient"
)

// Client is one probe connection of a run: a SignalR connection (Conn) or,
// on a Web PubSub target, a Web PubSub one (PubSub). Kinds use the field
// of their service's wire directly, so a send costs no more than the
// connection's own method; the run's housekeeping goes through the
// methods below.
type Client struct {
	Conn   *signalrclient.Conn
	PubSub *webpubsubclient.Conn
	// ID is how the hub addresses this connection; kinds that route to a
	// connection fill it in Prepare when the connect did not.
	ID string
}

// done is closed once the connection has ended.
func (c *Client) done() <-chan struct{} {
	if c.PubSub != nil {
		return c.PubSub.Done()
	}
	return c.Conn.Done()
}

// err is why the connection ended, nil while it is open or after Close.
func (c *Client) err() error {
	if c.PubSub != nil {
		return c.PubSub.Err()
	}
	return c.Conn.Err()
}

func (c *Client) close(ctx context.Context) error {
	if c.PubSub != nil {
		return c.PubSub.Close(ctx)
	}
	return c.Conn.Close(ctx)
}

// checkAlive ends a connection whose hub does not answer a WebSocket ping
// within wait (for SignalR over server-sent events or long polling: a
// send).
func (c *Client) checkAlive(ctx context.Context, wait time.Duration) error {
	if c.PubSub != nil {
		return c.PubSub.CheckAlive(ctx, wait)
	}
	return c.Conn.CheckAlive(ctx, wait)
}
