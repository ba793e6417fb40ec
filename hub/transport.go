package hub

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// transport carries bytes between the hub and one client. The connection
// logic sees only this, so other transports (Server-Sent Events, Long
// Polling) can sit behind it later. One goroutine reads and one writes.
type transport interface {
	// NextReader blocks until the client sends its next message.
	NextReader() (io.Reader, error)
	// NextWriter starts one outgoing message; binary selects the frame type
	// for protocols whose transfer format is Binary.
	NextWriter(binary bool) (io.WriteCloser, error)
	// SetReadDeadline bounds the pending and future reads.
	SetReadDeadline(t time.Time) error
	// SetWriteDeadline bounds future writes; only the writer calls it.
	SetWriteDeadline(t time.Time) error
	// CloseGracefully tells the client the transport is ending, then closes.
	CloseGracefully(deadline time.Time)
	// Abort closes at once; it unblocks a reader and a writer.
	Abort()
}

// wsTransport is the WebSockets transport.
type wsTransport struct{ ws *websocket.Conn }

func newUpgrader() *websocket.Upgrader {
	return &websocket.Upgrader{
		ReadBufferSize:  4096,
		WriteBufferSize: 4096,
		// Buffers are held only while a message is being written, so an idle
		// connection costs no write buffer.
		WriteBufferPool: &sync.Pool{},
		// Like ASP.NET's default, any origin may connect; hubprobe's hub is a
		// benchmark target, not an application with cookies to protect.
		CheckOrigin: func(*http.Request) bool { return true },
	}
}

func (t wsTransport) NextReader() (io.Reader, error) {
	_, r, err := t.ws.NextReader()
	return r, err
}

func (t wsTransport) NextWriter(binary bool) (io.WriteCloser, error) {
	if binary {
		return t.ws.NextWriter(websocket.BinaryMessage)
	}
	return t.ws.NextWriter(websocket.TextMessage)
}

func (t wsTransport) SetReadDeadline(d time.Time) error  { return t.ws.SetReadDeadline(d) }
func (t wsTransport) SetWriteDeadline(d time.Time) error { return t.ws.SetWriteDeadline(d) }

func (t wsTransport) CloseGracefully(deadline time.Time) {
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	_ = t.ws.WriteControl(websocket.CloseMessage, msg, deadline)
	_ = t.ws.Close()
}

func (t wsTransport) Abort() { _ = t.ws.NetConn().Close() }

var _ transport = wsTransport{}

// isTimeout reports a deadline expiry (handshake timeout).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
