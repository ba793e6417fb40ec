package aspnetclient

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// wsTransport is a WebSocket: each text message one persistent response
// one way, one hub invocation the other.
type wsTransport struct {
	ws           *websocket.Conn
	obs          clientconn.Observer
	writeTimeout time.Duration
	limit        int64
	// frame holds the message next returned, lent from clientconn's pool
	// until the next call, so a connection waiting for a message holds no
	// read buffer of its own.
	frame *[]byte
	guard clientconn.WriteGuard // fails the connection when a write is cut off mid-message
}

// dialWebSocket sends connect (or reconnect) as a WebSocket upgrade.
func dialWebSocket(ctx context.Context, c *Conn, reconnect bool) (*wsTransport, error) {
	path, extra := "connect", []string(nil)
	if reconnect {
		path, extra = "reconnect", c.cursorQuery()
	}
	u := c.s.requestURL(path, TransportWebSockets, extra...)
	u.RawQuery += "&" + tid()
	clientconn.WebSocketScheme(u)
	d := c.o.WebSocketDialer()
	ws, res, err := d.DialContext(ctx, u.String(), clientconn.RequestHeaders(c.o.Headers, c.s.accessToken))
	if res != nil {
		c.o.Observer.HTTPResponse("upgrade", res.StatusCode)
	}
	if err != nil {
		if res != nil && res.StatusCode != http.StatusSwitchingProtocols {
			return nil, statusError(clientconn.PhaseTransport, res)
		}
		return nil, clientconn.NewConnectError(clientconn.PhaseTransport, redact.URLError(err))
	}
	ws.SetReadLimit(c.o.MaxMessageSize)
	ws.SetPongHandler(c.live.OnPong) // set before the read goroutine reads
	t := &wsTransport{ws: ws, obs: c.o.Observer, writeTimeout: c.o.WriteTimeout, limit: c.o.MaxMessageSize}
	t.guard.Init(c.abortWrite)
	return t, nil
}

func (t *wsTransport) name() string { return TransportWebSockets }

func (t *wsTransport) next() ([]byte, error) {
	if t.frame != nil { // the last message is handled: give its buffer back
		clientconn.PutBuf(t.frame)
		t.frame = nil
	}
	typ, r, err := t.ws.NextReader()
	if err != nil {
		return nil, err
	}
	if typ != websocket.TextMessage {
		return nil, fmt.Errorf("%w: binary WebSocket message; the classic protocol is text", ErrProtocol)
	}
	buf := clientconn.GetBuf()
	b, err := readBounded(r, (*buf)[:0], t.limit)
	if err != nil {
		clientconn.PutBuf(buf)
		return nil, err
	}
	*buf, t.frame = b, buf
	t.obs.BytesReceived(len(b))
	return b, nil
}

func (t *wsTransport) setReadDeadline(d time.Time) { _ = t.ws.SetReadDeadline(d) }

// write sends b as one message. If ctx ends during the write, the
// socket is closed to unblock it and the connection fails: half a message
// cannot be taken back.
func (t *wsTransport) write(ctx context.Context, b []byte) error {
	if t.writeTimeout > 0 {
		_ = t.ws.SetWriteDeadline(time.Now().Add(t.writeTimeout))
	}
	if err := t.guard.Begin(ctx); err != nil {
		return err
	}
	err := t.ws.WriteMessage(websocket.TextMessage, b)
	if aborted := t.guard.End(ctx, errWriteAborted); aborted != nil {
		return aborted
	}
	if err != nil {
		return err
	}
	t.obs.BytesSent(len(b))
	return nil
}

// ping writes a WebSocket ping, whose pong the liveness check times.
func (t *wsTransport) ping(payload []byte, deadline time.Time) error {
	return t.ws.WriteControl(websocket.PingMessage, payload, deadline)
}

func (t *wsTransport) shutdown(deadline time.Time) {
	clientconn.SendClose(t.ws, websocket.CloseNormalClosure, deadline)
}

func (t *wsTransport) close() {
	_ = t.ws.Close()
	t.guard.Stop()
}
