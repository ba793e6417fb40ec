package probe

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/internal/clientconn"
	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/signalr"
)

// wsTransport is a WebSocket connection: full duplex, one hub protocol
// frame per WebSocket message.
type wsTransport struct {
	ws           *websocket.Conn
	frameType    int
	obs          Observer
	writeTimeout time.Duration
}

// dialWebSocket opens the transport and returns a *ConnectError on failure.
func dialWebSocket(ctx context.Context, o *Options, target *url.URL, token string) (*wsTransport, error) {
	d := websocket.Dialer{
		Proxy:             http.ProxyFromEnvironment,
		HandshakeTimeout:  o.HandshakeTimeout,
		ReadBufferSize:    clientconn.WebSocketBufferSize,
		WriteBufferSize:   clientconn.WebSocketBufferSize,
		WriteBufferPool:   &clientconn.WebSocketWriteBufferPool,
		EnableCompression: o.EnableCompression,
	}
	rt := o.HTTPClient.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if t, ok := rt.(*http.Transport); ok {
		// Clone first runs the transport's lazy HTTP/2 setup, which writes
		// TLSClientConfig: reading the field directly races with the
		// transport's first request on another goroutine.
		t = t.Clone()
		d.Proxy = t.Proxy
		d.NetDialContext = t.DialContext
		if d.TLSClientConfig = t.TLSClientConfig; d.TLSClientConfig != nil {
			// That setup offers h2, which an HTTP/2 server then picks, and
			// the WebSocket upgrade is HTTP/1.1 only.
			d.TLSClientConfig.NextProtos = []string{"http/1.1"}
		}
	}
	ws, res, err := d.DialContext(ctx, target.String(), requestHeaders(o.Headers, token))
	if err != nil {
		if res != nil && res.StatusCode != http.StatusSwitchingProtocols {
			return nil, statusError(PhaseTransport, res)
		}
		return nil, newConnectError(PhaseTransport, redact.URLError(err))
	}
	return &wsTransport{ws: ws, frameType: frameTypeFor(o.Protocol.TransferFormat()), obs: o.Observer, writeTimeout: o.WriteTimeout}, nil
}

func (t *wsTransport) name() string { return TransportWebSockets }

func (t *wsTransport) nextFrame() (int, io.Reader, error) { return t.ws.NextReader() }

func (t *wsTransport) setReadDeadline(d time.Time) error { return t.ws.SetReadDeadline(d) }

func (t *wsTransport) writeHandshake(b []byte, deadline time.Time) error {
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

// shutdown sends the close frame (1000) that starts the closing handshake.
func (t *wsTransport) shutdown(deadline time.Time) {
	_ = t.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), deadline)
}

// goodbye answers a server Close or bad bytes with a close frame, so the
// server sees an orderly end rather than a reset.
func (t *wsTransport) goodbye(reason error) {
	code := websocket.CloseNormalClosure
	var closeErr *CloseError
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
