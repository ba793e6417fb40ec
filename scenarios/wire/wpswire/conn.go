package wpswire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/webpubsubclient"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// payloadType is how every payload goes: as JSON, which receivers get
// back as the same JSON text.
const payloadType = webpubsub.DataTypeJSON

// upstreamEchoEvent is the custom event the echo sends: the service posts
// it to the hub's event handler as azure.webpubsub.user.echo.
const upstreamEchoEvent = "echo"

// conn is one Web PubSub client connection.
type conn struct{ *webpubsubclient.Conn }

func (c conn) ID() string { return c.ConnectionID() }

// Dropped is why the connection ended, its protocol errors told apart,
// and when.
func (c conn) Dropped() (string, time.Time) {
	return clientconn.DropReason(c.Err(), func(err error) bool { return errors.Is(err, webpubsubclient.ErrProtocol) }), c.EndedAt()
}

// Echo is the guide's upstream echo: the payload goes as the event
// "echo"; the service posts it to the hub's event handler as a
// CloudEvents request, the handler (hubprobe's own, or any that answers
// with the data it got) answers with the same data, and the service
// delivers the answer to the sender as a message from the server.
func (c conn) Echo(ctx context.Context, p json.RawMessage) error {
	return c.SendEvent(ctx, upstreamEchoEvent, payloadType, p, 0)
}

// JoinGroup joins with the client's own joinGroup frame, waiting for its
// ack.
func (c conn) JoinGroup(ctx context.Context, group string) error {
	if err := c.Conn.JoinGroup(ctx, group); err != nil {
		return fmt.Errorf("joinGroup: %w", err)
	}
	return nil
}

// SendToGroup sends through the subprotocol; the service delivers to
// every member of the group, the sender too.
func (c conn) SendToGroup(ctx context.Context, group string, p json.RawMessage) error {
	return c.Conn.SendToGroup(ctx, group, payloadType, p, 0)
}

// restAPI sends each payload as the whole body, of payloadType.
type restAPI struct {
	rest *azure.WebPubSubRESTClient
	obs  clientconn.Observer
}

func (a restAPI) SendToAll(ctx context.Context, p json.RawMessage) error {
	return a.sent(p, a.rest.SendToAll(ctx, payloadType, p))
}

func (a restAPI) SendToUser(ctx context.Context, user string, p json.RawMessage) error {
	return a.sent(p, a.rest.SendToUser(ctx, user, payloadType, p))
}

func (a restAPI) SendToGroup(ctx context.Context, group string, p json.RawMessage) error {
	return a.sent(p, a.rest.SendToGroup(ctx, group, payloadType, p))
}

func (a restAPI) SendToConnection(ctx context.Context, id string, p json.RawMessage) error {
	return a.sent(p, a.rest.SendToConnection(ctx, id, payloadType, p))
}

func (a restAPI) AddToGroup(ctx context.Context, group, id string) error {
	return a.rest.AddConnectionToGroup(ctx, group, id)
}

func (a restAPI) sent(p json.RawMessage, err error) error {
	if err == nil {
		a.obs.BytesSent(len(p))
	}
	return err
}
