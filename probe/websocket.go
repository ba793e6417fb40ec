package probe

import (
	"context"
	"net/http"
	"net/url"

	"github.com/gorilla/websocket"
)

// wsBufferSize keeps an idle connection small: gorilla holds one read
// buffer of this size; write buffers come from wsWriteBufferPool.
const wsBufferSize = 4096

// dialWebSocket opens the transport and returns a *ConnectError on failure.
func dialWebSocket(ctx context.Context, o *Options, target *url.URL, token string) (*websocket.Conn, error) {
	d := websocket.Dialer{
		Proxy:             http.ProxyFromEnvironment,
		HandshakeTimeout:  o.HandshakeTimeout,
		ReadBufferSize:    wsBufferSize,
		WriteBufferSize:   wsBufferSize,
		WriteBufferPool:   &wsWriteBufferPool,
		EnableCompression: o.EnableCompression,
	}
	rt := o.HTTPClient.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if t, ok := rt.(*http.Transport); ok {
		d.Proxy = t.Proxy
		d.NetDialContext = t.DialContext
		if t.TLSClientConfig != nil {
			d.TLSClientConfig = t.TLSClientConfig.Clone()
		}
	}
	ws, res, err := d.DialContext(ctx, target.String(), requestHeaders(o.Headers, token))
	if err != nil {
		if res != nil && res.StatusCode != http.StatusSwitchingProtocols {
			return nil, statusError(PhaseTransport, res)
		}
		return nil, newConnectError(PhaseTransport, redactURLError(err))
	}
	return ws, nil
}

func frameTypeFor(f TransferFormat) int {
	if f == BinaryFormat {
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
