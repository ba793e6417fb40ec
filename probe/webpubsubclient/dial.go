package webpubsubclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// dialURL maps http(s) to ws(s) and adds the token as access_token. Errors
// never quote the URL: it may already hold a token.
func dialURL(raw, token string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("webpubsub client: URL: %w", redact.URLError(err))
	}
	switch strings.ToLower(u.Scheme) {
	case "ws", "http":
		u.Scheme = "ws"
	case "wss", "https":
		u.Scheme = "wss"
	default:
		return "", errors.New("webpubsub client: URL must be ws(s):// or http(s)://")
	}
	if u.Host == "" {
		return "", errors.New("webpubsub client: URL has no host")
	}
	if token != "" {
		q := u.Query()
		q.Set("access_token", token)
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// dialWebSocket performs the upgrade, offering only o.Protocol and no
// compression. A refused upgrade keeps its status and body, so a 429 is
// classified as throttling.
func dialWebSocket(ctx context.Context, o *Options, target string) (*websocket.Conn, error) {
	d := o.WebSocketDialer()
	d.Subprotocols = []string{o.Protocol}
	ws, res, err := d.DialContext(ctx, target, o.Headers)
	if res != nil {
		o.Observer.HTTPResponse(EndpointUpgrade, res.StatusCode)
	}
	if err != nil {
		if res != nil && res.StatusCode != http.StatusSwitchingProtocols {
			return nil, upgradeRefused(res)
		}
		return nil, connectError(clientconn.PhaseTransport, redact.URLError(err))
	}
	if got := ws.Subprotocol(); got != o.Protocol {
		_ = ws.Close()
		return nil, &clientconn.ConnectError{Phase: clientconn.PhaseHandshake,
			Err: fmt.Errorf("the service did not accept subprotocol %s (it answered %q)", o.Protocol, limit(got, 64))}
	}
	ws.SetReadLimit(o.MaxMessageSize)
	return ws, nil
}

func upgradeRefused(res *http.Response) *clientconn.ConnectError {
	return &clientconn.ConnectError{Phase: clientconn.PhaseTransport, StatusCode: res.StatusCode, Body: clientconn.ErrorBody(res),
		Err: clientconn.Refusal("WebSocket upgrade refused with HTTP", res.StatusCode, "is the URL a Web PubSub client endpoint, /client/hubs/{hub}?")}
}

// handshake waits for the connected message within timeout and ctx.
func (c *Conn) handshake(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	// Closing the socket is the only way to interrupt a blocked read.
	stop := context.AfterFunc(ctx, func() { _ = c.ws.Close() })
	err := c.awaitConnected(deadline)
	if !stop() {
		return connectError(clientconn.PhaseHandshake, ctx.Err())
	}
	return err
}

// awaitConnected reads frames until the connected message. Frames of a
// type this client does not know are skipped, as everywhere.
func (c *Conn) awaitConnected(deadline time.Time) error {
	began := time.Now()
	for {
		bp, err := c.nextFrame(deadline)
		if clientconn.IsTimeout(err) {
			return &clientconn.ConnectError{Phase: clientconn.PhaseTimeout,
				Err: fmt.Errorf("handshake: no connected message after %s: %w", time.Since(began).Round(time.Millisecond), err)}
		}
		if err != nil {
			return connectError(clientconn.PhaseHandshake, c.describeReadError(err))
		}
		connected, err := c.handshakeFrame(*bp)
		clientconn.PutBuf(bp)
		if connected || err != nil {
			return err
		}
	}
}

func (c *Conn) handshakeFrame(data []byte) (connected bool, err error) {
	f := &c.frame
	if err := c.dec.Decode(data, f); err != nil {
		if errors.Is(err, webpubsub.ErrUnknownType) {
			return false, nil
		}
		return false, connectError(clientconn.PhaseHandshake, fmt.Errorf("%w: %w", ErrProtocol, err))
	}
	switch f.Kind {
	case webpubsub.KindConnected:
		c.connectionID, c.userID = f.ConnectionID, f.UserID
		return true, nil
	case webpubsub.KindDisconnected:
		return false, connectError(clientconn.PhaseHandshake, &clientconn.CloseError{Message: limit(f.Message, maxQuoted)})
	}
	return false, connectError(clientconn.PhaseHandshake, protocolError("a %v frame before the connected message", f.Kind))
}
