package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// WebPubSubRESTClient sends messages and manages connections through the
// data-plane REST API of Azure Web PubSub, for one hub. Every request
// carries a fresh token whose aud is the full request URL, query included,
// as the service SDK signs it. Throttled calls (HTTP 429) are retried as
// RESTOptions say, exactly as RESTClient does. It is safe for concurrent use.
type WebPubSubRESTClient struct {
	cs   ConnectionString
	hub  string
	t    restTransport
	urls *webpubsub.REST
}

// NewWebPubSubRESTClient returns a client for hub. Requests go to the
// Endpoint key with the Port key applied. opts.APIVersion is the
// data-plane api-version, webpubsub.APIVersion when empty.
func NewWebPubSubRESTClient(cs ConnectionString, hub string, opts RESTOptions) (*WebPubSubRESTClient, error) {
	if opts.APIVersion != "" && !validWebPubSubAPIVersion(opts.APIVersion) {
		return nil, fmt.Errorf("azure: Web PubSub REST api-version %q is not a date like %s", azureTruncate(opts.APIVersion, 32), webpubsub.APIVersion)
	}
	base, err := cs.webPubSubBase(hub)
	if err != nil {
		return nil, err
	}
	urls, err := webpubsub.NewREST(base, hub, opts.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	o := opts.withTransportDefaults()
	auth, err := newRequestAuth(cs, o, WebPubSubScope, false)
	if err != nil {
		return nil, err
	}
	return &WebPubSubRESTClient{cs: cs, hub: hub, t: restTransport{opts: o, auth: auth}, urls: urls}, nil
}

// validWebPubSubAPIVersion accepts the data-plane versions' form,
// YYYY-MM-DD with an optional -preview.
func validWebPubSubAPIVersion(v string) bool {
	if len(v) < 10 {
		return false
	}
	if _, err := time.Parse(time.DateOnly, v[:10]); err != nil {
		return false
	}
	return v[10:] == "" || v[10:] == "-preview"
}

// SendToAll sends data to every connection of the hub except the excluded
// connection IDs.
func (c *WebPubSubRESTClient) SendToAll(ctx context.Context, dataType webpubsub.DataType, data []byte, excluded ...string) error {
	return c.send(ctx, "send to all", c.urls.SendToAll(excluded...), dataType, data)
}

// SendToUser sends data to every connection of userID (the sub of their
// tokens).
func (c *WebPubSubRESTClient) SendToUser(ctx context.Context, userID string, dataType webpubsub.DataType, data []byte) error {
	if userID == "" {
		return errors.New("azure: REST send to user: empty user ID")
	}
	return c.send(ctx, "send to user", c.urls.SendToUser(userID), dataType, data)
}

// SendToGroup sends data to every connection in group except the excluded
// connection IDs.
func (c *WebPubSubRESTClient) SendToGroup(ctx context.Context, group string, dataType webpubsub.DataType, data []byte, excluded ...string) error {
	if err := restCheckGroup(group); err != nil {
		return err
	}
	return c.send(ctx, "send to group", c.urls.SendToGroup(group, excluded...), dataType, data)
}

// SendToConnection sends data to one connection.
func (c *WebPubSubRESTClient) SendToConnection(ctx context.Context, connectionID string, dataType webpubsub.DataType, data []byte) error {
	if connectionID == "" {
		return errors.New("azure: REST send to connection: empty connection ID")
	}
	return c.send(ctx, "send to connection", c.urls.SendToConnection(connectionID), dataType, data)
}

// AddConnectionToGroup puts connectionID in group.
func (c *WebPubSubRESTClient) AddConnectionToGroup(ctx context.Context, group, connectionID string) error {
	if err := restCheckGroup(group); err != nil {
		return err
	}
	if connectionID == "" {
		return errors.New("azure: REST add to group: empty connection ID")
	}
	return c.t.do(ctx, c.call("add to group", c.urls.AddConnectionToGroup(group, connectionID), nil, ""))
}

// CloseConnection closes connectionID; the service passes reason, when not
// empty, to the client in its disconnected message.
func (c *WebPubSubRESTClient) CloseConnection(ctx context.Context, connectionID, reason string) error {
	if connectionID == "" {
		return errors.New("azure: REST close connection: empty connection ID")
	}
	return c.t.do(ctx, c.call("close connection", c.urls.CloseConnection(connectionID, reason), nil, ""))
}

// send posts data as the raw body, its Content-Type naming dataType, which
// is how the service tells the receivers' dataType.
func (c *WebPubSubRESTClient) send(ctx context.Context, op string, req webpubsub.Request, dataType webpubsub.DataType, data []byte) error {
	switch {
	case dataType > webpubsub.DataTypeBinary:
		return fmt.Errorf("azure: REST %s: unknown data type %v", op, dataType)
	case dataType == webpubsub.DataTypeJSON && !json.Valid(data):
		return fmt.Errorf("azure: REST %s: data is not one valid JSON value", op)
	case len(data) > restMaxBody:
		return fmt.Errorf("azure: REST %s: message of %d bytes is over the service's %d-byte limit", op, len(data), restMaxBody)
	}
	if data == nil {
		data = []byte{}
	}
	return c.t.do(ctx, c.call(op, req, data, dataType.ContentType()))
}

// call accepts any 2xx: the service documents 202 for sends, 200 for adds
// and 204 for closes, and its generated 2024-12-01 spec lists 204 for
// sends where the hand-written one and the SDK say 202.
func (c *WebPubSubRESTClient) call(op string, req webpubsub.Request, body []byte, contentType string) restCall {
	return restCall{op: op, method: req.Method, url: req.URL, audience: req.URL, body: body, contentType: contentType, want: restWantSuccess}
}
