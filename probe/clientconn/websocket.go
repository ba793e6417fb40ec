package clientconn

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

	"github.com/hubprobe/hubprobe/internal/rawsock"
)

// WebSocketDialer is the dialer of every client's WebSocket upgrades:
// bounded by HandshakeTimeout, with small buffers from the shared pool,
// and with HTTPClient's proxy, dialer and TLS configuration when its
// Transport is an *http.Transport (the environment's proxy otherwise).
// The caller adds what its protocol offers: subprotocols, compression.
func (s Settings) WebSocketDialer() websocket.Dialer {
	d := websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: s.HandshakeTimeout,
		ReadBufferSize:   WebSocketReadBufferSize,
		WriteBufferSize:  WebSocketBufferSize,
		WriteBufferPool:  &WebSocketWriteBufferPool,
	}
	var rt http.RoundTripper
	if s.HTTPClient != nil {
		rt = s.HTTPClient.Transport
	}
	if u, ok := upgradeSettingsOf(rt); ok {
		d.Proxy, d.NetDialContext, d.TLSClientConfig = u.proxy, u.dial, u.tls
	}
	d.NetDialContext = rawsock.Dialer(d.NetDialContext)
	return d
}

// SendClose writes a WebSocket close frame with code, by deadline: the
// start of the closing handshake, or the answer to the server's. A socket
// already gone has nothing left to tell.
func SendClose(ws *websocket.Conn, code int, deadline time.Time) {
	_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), deadline)
}

// SendGoodbye answers the reason a connection ended with a close frame,
// so the server sees an orderly end rather than a reset: 1000 after the
// server's own close (a *CloseError), 1002 after bytes that broke
// protocolErr, the client's protocol error; nothing after any other end.
// It runs on the reading goroutine, once reading stopped: it then reads
// and drops what the server sent that was not read yet, until the server
// closes or GoodbyeWait is up, because closing a socket with bytes unread
// resets the connection, and the server would lose the close frame. Bad
// bytes often stop reading in the middle of a frame: gorilla's read limit
// stops at the header of a frame too large.
func SendGoodbye(ws *websocket.Conn, reason, protocolErr error) {
	code := websocket.CloseNormalClosure
	var closeErr *CloseError
	switch {
	case errors.As(reason, &closeErr):
	case errors.Is(reason, protocolErr):
		code = websocket.CloseProtocolError
	default:
		return
	}
	SendClose(ws, code, time.Now().Add(GoodbyeWait))
	discardUnread(ws.NetConn(), time.Now().Add(GoodbyeWait))
}

// discardUnread reads and drops what conn holds until the peer closes it
// or deadline.
func discardUnread(conn net.Conn, deadline time.Time) {
	if conn.SetReadDeadline(deadline) == nil {
		_, _ = io.Copy(io.Discard, conn)
	}
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
