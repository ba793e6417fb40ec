package scenarios

import (
	"context"
	"time"

	"github.com/hubprobe/hubprobe/probe/aspnetclient"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"github.com/hubprobe/hubprobe/probe/webpubsubclient"
)

// Client is one probe connection of a run: an ASP.NET Core SignalR
// connection (Conn), on a Web PubSub target a Web PubSub one (PubSub), or
// on a classic ASP.NET SignalR target a classic one (Classic). The
// hub-method kinds reach the benchmark hub through hub, which speaks its
// contract on the client's wire; the others use their wire's field
// directly; the run's housekeeping goes through the methods below.
type Client struct {
	Conn    *signalrclient.Conn
	PubSub  *webpubsubclient.Conn
	Classic *aspnetclient.Conn
	// ID is how the hub addresses this connection; kinds that route to a
	// connection fill it in Prepare when the connect did not.
	ID  string
	hub benchHub
}

// connection is what the run needs of every client's connection.
type connection interface {
	Done() <-chan struct{}
	Err() error
	Close(ctx context.Context) error
	CheckAlive(ctx context.Context, wait time.Duration) error
}

func (c *Client) conn() connection {
	switch {
	case c.PubSub != nil:
		return c.PubSub
	case c.Classic != nil:
		return c.Classic
	}
	return c.Conn
}

// done is closed once the connection has ended.
func (c *Client) done() <-chan struct{} { return c.conn().Done() }

// err is why the connection ended, nil while it is open or after Close.
func (c *Client) err() error { return c.conn().Err() }

func (c *Client) close(ctx context.Context) error { return c.conn().Close(ctx) }

// checkAlive ends a connection whose hub does not answer a WebSocket ping
// within wait (over HTTP transports: a send, or the classic ping request).
func (c *Client) checkAlive(ctx context.Context, wait time.Duration) error {
	return c.conn().CheckAlive(ctx, wait)
}
