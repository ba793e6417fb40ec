package hub

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// transport carries bytes between the hub and one client: WebSockets,
// Server-Sent Events or Long Polling. The connection logic sees only this.
// One goroutine reads; the connection serializes writes (conn.wmu), so at
// most one write runs at a time.
type transport interface {
	// NextReader blocks until the client sends its next message (a frame,
	// or the body of a POST).
	NextReader() (io.Reader, error)
	// StopReading tells the transport the reader is done for good, so it
	// can let go of what the client sent.
	StopReading()
	// Buffered is how many input bytes can be read without waiting; 0 when
	// unknown.
	Buffered() int
	// WriteMessage sends data as one message; binary selects the frame type
	// for protocols whose transfer format is Binary.
	WriteMessage(binary bool, data []byte) error
	// SetReadDeadline bounds the pending and future reads.
	SetReadDeadline(t time.Time) error
	// SetWriteDeadline bounds future writes; called with writes serialized.
	SetWriteDeadline(t time.Time) error
	// CloseGracefully tells the client the transport is ending, then closes.
	CloseGracefully(deadline time.Time)
	// Abort closes at once; it unblocks a reader and a writer.
	Abort()
}

// wsTransport is the WebSockets transport. br is the connection's read
// buffer when known.
type wsTransport struct {
	ws *websocket.Conn
	br *bufio.Reader
}

func newUpgrader() *websocket.Upgrader {
	return &websocket.Upgrader{
		// Zero reuses the HTTP server's 4 KiB read buffer, which
		// hijackRecorder exposes for Buffered.
		ReadBufferSize:  0,
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

func (wsTransport) StopReading() {}

func (t wsTransport) Buffered() int {
	if t.br == nil {
		return 0
	}
	return t.br.Buffered()
}

func (t wsTransport) WriteMessage(binary bool, data []byte) error {
	if binary {
		return t.ws.WriteMessage(websocket.BinaryMessage, data)
	}
	return t.ws.WriteMessage(websocket.TextMessage, data)
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

// hijackRecorder remembers the read buffer the HTTP server hands over on
// Hijack; the upgrader keeps reading through it (ReadBufferSize 0).
type hijackRecorder struct {
	http.ResponseWriter
	br *bufio.Reader
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("response writer cannot be hijacked")
	}
	conn, rw, err := hj.Hijack()
	if rw != nil {
		h.br = rw.Reader
	}
	return conn, rw, err
}

// isTimeout reports a deadline expiry (handshake timeout).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
