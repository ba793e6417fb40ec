package transport

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Conn carries bytes between the hub and one client: WebSockets,
// Server-Sent Events or Long Polling. The connection logic sees only this.
// One goroutine reads; the connection serializes writes, so at most one
// write runs at a time.
type Conn interface {
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

// Kind is the transport a connection token is bound to.
type Kind uint8

// The transports, and KindNone for a token no transport holds yet.
const (
	KindNone Kind = iota
	KindWebSockets
	KindServerSentEvents
	KindLongPolling
)

const (
	// MaxBatchBytes caps how many queued messages one transport message
	// joins; batching saves a write per message under load.
	MaxBatchBytes = 64 * 1024
	// MaxPooledBuffer keeps one oversized message from pinning a large
	// buffer in a pool forever; every pool of the hub's buffers honours it.
	MaxPooledBuffer = 64 * 1024
	// batchCap is a fresh batch buffer's capacity.
	batchCap = 8 * 1024
)

// batchPool holds the buffers that join queued messages into one transport
// message, and Long Polling's pending output.
var batchPool = sync.Pool{New: func() any {
	b := make([]byte, 0, batchCap)
	return &b
}}

// GetBatch borrows an empty batch buffer; a connection holds one only while
// it writes (on Long Polling: while output waits for a poll).
func GetBatch() *[]byte { return batchPool.Get().(*[]byte) }

// PutBatch returns a batch buffer, emptied, unless it grew past
// MaxPooledBuffer.
func PutBatch(b *[]byte) {
	if cap(*b) <= MaxPooledBuffer {
		*b = (*b)[:0]
		batchPool.Put(b)
	}
}

// WebSocket is the WebSockets transport. Reader is the connection's read
// buffer when known (see HijackRecorder).
type WebSocket struct {
	WS     *websocket.Conn
	Reader *bufio.Reader
}

// NewUpgrader is the upgrader of every WebSocket the hub accepts.
func NewUpgrader() *websocket.Upgrader {
	return &websocket.Upgrader{
		// Zero reuses the hijacked read buffer: HijackRecorder's own,
		// which it exposes for Buffered.
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

// NextReader returns the next frame's reader.
func (t WebSocket) NextReader() (io.Reader, error) {
	_, r, err := t.WS.NextReader()
	return r, err
}

// FlushBeforeControl runs flush before the hub answers a client's ping or
// takes its pong. NextReader reads control frames by itself and goes on to
// wait for the next data frame, so a hub that holds its replies while input
// is buffered (to batch them with what that input brings) must not hold
// them for a control frame: it brings nothing to batch, and the replies
// would wait for the client's next message. A probe measuring its round
// trip pings right behind its invocations.
func (t WebSocket) FlushBeforeControl(flush func() error) {
	t.WS.SetPingHandler(func(data string) error {
		if err := flush(); err != nil {
			return err
		}
		return answerPing(t.WS, data)
	})
	t.WS.SetPongHandler(func(string) error { return flush() })
}

// answerPing writes the pong gorilla's default ping handler writes, and
// like it lets a socket that is already going fail the next read instead.
func answerPing(ws *websocket.Conn, data string) error {
	err := ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(pongWait))
	var ne net.Error
	if errors.Is(err, websocket.ErrCloseSent) || errors.As(err, &ne) {
		return nil
	}
	return err
}

// pongWait bounds the write of a pong, as gorilla's default handler does.
const pongWait = time.Second

// StopReading has nothing to let go of.
func (WebSocket) StopReading() {}

// Buffered is what the read buffer holds.
func (t WebSocket) Buffered() int {
	if t.Reader == nil {
		return 0
	}
	return t.Reader.Buffered()
}

// WriteMessage writes one text or binary frame.
func (t WebSocket) WriteMessage(binary bool, data []byte) error {
	if binary {
		return t.WS.WriteMessage(websocket.BinaryMessage, data)
	}
	return t.WS.WriteMessage(websocket.TextMessage, data)
}

// SetReadDeadline is the socket's.
func (t WebSocket) SetReadDeadline(d time.Time) error { return t.WS.SetReadDeadline(d) }

// SetWriteDeadline is the socket's.
func (t WebSocket) SetWriteDeadline(d time.Time) error { return t.WS.SetWriteDeadline(d) }

// CloseGracefully sends a normal close frame, then closes.
func (t WebSocket) CloseGracefully(deadline time.Time) {
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	_ = t.WS.WriteControl(websocket.CloseMessage, msg, deadline)
	_ = t.WS.Close()
}

// Abort cuts the socket.
func (t WebSocket) Abort() { _ = t.WS.NetConn().Close() }

var _ Conn = WebSocket{}

// HijackRecorder hands the upgrader a read buffer of the connection's
// own and remembers it; an upgrader from NewUpgrader keeps reading through
// it. The HTTP server's buffers hang off its per-request state (the
// request, its headers and context, a 4 KiB write buffer): a reader of
// theirs would keep all of that for the connection's life, where a handler
// that returns after the upgrade lets it go.
type HijackRecorder struct {
	http.ResponseWriter
	Reader *bufio.Reader
}

// Hijack hijacks the connection and gives it a read buffer that reads the
// socket itself. Bytes the server had already buffered (a client that did
// not wait for the 101) stay in the server's reader, which the upgrader
// then refuses.
func (h *HijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := hijack(h.ResponseWriter)
	if err != nil || rw.Reader.Buffered() > 0 {
		return conn, rw, err
	}
	h.Reader = bufio.NewReaderSize(conn, readBufferSize)
	return conn, bufio.NewReadWriter(h.Reader, rw.Writer), nil
}

// CorkHijacker hands the upgrader the hijacked connection behind Cork, so
// the upgraded socket's writes can be held and sent together. Reads keep
// the server's buffer: a handler that holds its request for the
// connection's life would only add a second one.
type CorkHijacker struct {
	http.ResponseWriter
	Cork *Cork
}

// Hijack hijacks the connection and puts Cork in front of it.
func (h CorkHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := hijack(h.ResponseWriter)
	if err != nil {
		return conn, rw, err
	}
	h.Cork.Conn = conn
	return h.Cork, rw, nil
}

func hijack(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("response writer cannot be hijacked")
	}
	return hj.Hijack()
}

// readBufferSize is a hub WebSocket's read buffer, the size of the one
// net/http would have lent.
const readBufferSize = 4096

// IsTimeout reports a deadline expiry (a handshake timeout).
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// WriteText answers with exactly msg as a text/plain body, as ASP.NET's
// connection dispatcher does.
func WriteText(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg))
}
