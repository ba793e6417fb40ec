package signalrclient

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// wsTransport is a WebSocket connection: full duplex, one hub protocol
// frame per WebSocket message.
type wsTransport struct {
	ws           *websocket.Conn
	frameType    int
	obs          clientconn.Observer
	writeTimeout time.Duration
}

// dialWebSocket opens the transport and returns a *clientconn.ConnectError on failure.
func dialWebSocket(ctx context.Context, o *Options, target *url.URL, token string) (*wsTransport, error) {
	d := websocket.Dialer{
		Proxy:             http.ProxyFromEnvironment,
		HandshakeTimeout:  o.HandshakeTimeout,
		ReadBufferSize:    clientconn.WebSocketBufferSize,
		WriteBufferSize:   clientconn.WebSocketBufferSize,
		WriteBufferPool:   &clientconn.WebSocketWriteBufferPool,
		EnableCompression: o.EnableCompression,
	}
	if u, ok := upgradeSettingsOf(o.HTTPClient.Transport); ok {
		d.Proxy, d.NetDialContext, d.TLSClientConfig = u.proxy, u.dial, u.tls
	}
	ws, res, err := d.DialContext(ctx, target.String(), requestHeaders(o.Headers, token))
	if err != nil {
		if res != nil && res.StatusCode != http.StatusSwitchingProtocols {
			return nil, statusError(clientconn.PhaseTransport, res)
		}
		return nil, clientconn.NewConnectError(clientconn.PhaseTransport, redact.URLError(err))
	}
	return &wsTransport{ws: ws, frameType: frameTypeFor(o.Protocol.TransferFormat()), obs: o.Observer, writeTimeout: o.WriteTimeout}, nil
}

func (t *wsTransport) name() string { return TransportWebSockets }

func (t *wsTransport) nextFrame() (int, io.Reader, error) { return t.ws.NextReader() }

func (t *wsTransport) setReadDeadline(d time.Time) error { return t.ws.SetReadDeadline(d) }

func (t *wsTransport) writeHandshake(_ context.Context, b []byte, deadline time.Time) error {
	if err := t.ws.SetWriteDeadline(deadline); err != nil {
		return err
	}
	if err := t.ws.WriteMessage(t.frameType, b); err != nil {
		return err
	}
	t.obs.BytesSent(len(b))
	return t.ws.SetWriteDeadline(time.Time{})
}

func (t *wsTransport) writeFrame(b []byte) error {
	if t.writeTimeout > 0 {
		// gorilla applies a deadline on every write anyway; this sets it.
		_ = t.ws.SetWriteDeadline(time.Now().Add(t.writeTimeout))
	}
	if err := t.ws.WriteMessage(t.frameType, b); err != nil {
		return err
	}
	t.obs.BytesSent(len(b))
	return nil
}

// ping writes a WebSocket ping: for the half-open check and the round
// trip, whose pong the liveness check times.
func (t *wsTransport) ping(payload []byte, deadline time.Time) error {
	return t.ws.WriteControl(websocket.PingMessage, payload, deadline)
}

// shutdown sends the close frame (1000) that starts the closing handshake.
func (t *wsTransport) shutdown(deadline time.Time) {
	_ = t.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), deadline)
}

// goodbye answers a server Close or bad bytes with a close frame, so the
// server sees an orderly end rather than a reset.
func (t *wsTransport) goodbye(reason error) {
	code := websocket.CloseNormalClosure
	var closeErr *clientconn.CloseError
	switch {
	case errors.As(reason, &closeErr):
	case errors.Is(reason, signalr.ErrProtocol):
		code = websocket.CloseProtocolError
	default:
		return
	}
	_ = t.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(goodbyeWait))
}

func (t *wsTransport) close() { t.ws.Close() }

func frameTypeFor(f signalr.TransferFormat) int {
	if f == signalr.BinaryFormat {
		return websocket.BinaryMessage
	}
	return websocket.TextMessage
}

func frameTypeName(t int) string {
	switch t {
	case websocket.TextMessage:
		return "text"
	case websocket.BinaryMessage:
		return "binary"
	}
	return "control"
}

// upgradeSettings are what a WebSocket dial takes from an HTTP transport.
type upgradeSettings struct {
	proxy func(*http.Request) (*url.URL, error)
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	tls   *tls.Config
}

// defaultUpgradeSettings are http.DefaultTransport's, which every scenario
// connection uses: read once, not once per connection.
var defaultUpgradeSettings = sync.OnceValue(func() upgradeSettings {
	return cloneUpgradeSettings(http.DefaultTransport.(*http.Transport))
})

// upgradeSettingsOf reads rt's proxy, dialer and TLS settings; ok is false
// when rt is not an *http.Transport. Clone first runs the transport's lazy
// HTTP/2 setup, which writes TLSClientConfig: reading the field directly
// would race with the transport's first request on another goroutine. That
// setup offers h2, which an HTTP/2 server then picks, and the WebSocket
// upgrade is HTTP/1.1 only.
func upgradeSettingsOf(rt http.RoundTripper) (upgradeSettings, bool) {
	if rt == nil {
		rt = http.DefaultTransport
	}
	t, ok := rt.(*http.Transport)
	if !ok {
		return upgradeSettings{}, false
	}
	if rt == http.DefaultTransport {
		return defaultUpgradeSettings(), true
	}
	return cloneUpgradeSettings(t), true
}

func cloneUpgradeSettings(t *http.Transport) upgradeSettings {
	c := t.Clone()
	u := upgradeSettings{proxy: c.Proxy, dial: c.DialContext, tls: c.TLSClientConfig}
	if u.tls != nil {
		u.tls.NextProtos = []string{"http/1.1"}
	}
	return u
}
