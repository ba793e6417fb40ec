package signalrclient

import (
	"context"
	"io"
	"net/http"
	"net/url"
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
	d := o.WebSocketDialer()
	d.EnableCompression = o.EnableCompression
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
	clientconn.SendClose(t.ws, websocket.CloseNormalClosure, deadline)
}

// goodbye answers a server Close or bad bytes with a close frame, so the
// server sees an orderly end rather than a reset.
func (t *wsTransport) goodbye(reason error) {
	clientconn.SendGoodbye(t.ws, reason, signalr.ErrProtocol)
}

func (t *wsTransport) close() { _ = t.ws.Close() }

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
