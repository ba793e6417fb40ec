package transport

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"time"
)

// SSE is the Server-Sent Events transport: the hub writes to the client on
// one long GET response, one event per message, and the client sends by
// POST. It carries text only.
type SSE struct {
	Inbox
	w    http.ResponseWriter
	rc   *http.ResponseController
	gone <-chan struct{} // the GET request's context

	mu   sync.Mutex // guards live against the GET handler returning
	live bool
}

var (
	sseDataPrefix = []byte("data: ")
	sseLineEnd    = []byte("\r\n")
)

// NewSSE serves the event stream on the GET request r, whose handler runs
// the connection until it ends.
func NewSSE(w http.ResponseWriter, r *http.Request) *SSE {
	return &SSE{Inbox: newInbox(), w: w, rc: http.NewResponseController(w), gone: r.Context().Done(), live: true}
}

// Open sends the event stream's headers and its opening comment, which
// some browsers need before they report the stream open.
func (t *SSE) Open() error {
	h := t.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache,no-store")
	h.Set("Pragma", "no-cache")
	h.Set("Content-Encoding", "identity")
	h.Set("Long-Running", "true")
	t.w.WriteHeader(http.StatusOK)
	if _, err := io.WriteString(t.w, ":\r\n"); err != nil {
		return err
	}
	return t.rc.Flush()
}

// NextReader waits for the next POST.
func (t *SSE) NextReader() (io.Reader, error) { return t.next(t.gone) }

// StopReading ends the wait for POSTs.
func (t *SSE) StopReading() { t.stopReading() }

// Buffered is what the current POST still has to come.
func (t *SSE) Buffered() int { return t.buffered() }

// WriteMessage sends data as one unnamed event: every line of it becomes a
// "data:" field (the client joins them with LF again), and a blank line
// ends the event.
func (t *SSE) WriteMessage(_ bool, data []byte) error {
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if err := t.writeAll(sseDataPrefix, line, sseLineEnd); err != nil {
			return err
		}
		if !more {
			break
		}
		data = rest
	}
	if err := t.writeAll(sseLineEnd); err != nil {
		return err
	}
	return t.rc.Flush()
}

func (t *SSE) writeAll(parts ...[]byte) error {
	for _, p := range parts {
		if _, err := t.w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// SetReadDeadline bounds the wait for a POST.
func (t *SSE) SetReadDeadline(d time.Time) error { t.setReadDeadline(d); return nil }

// SetWriteDeadline bounds writes to the event stream.
func (t *SSE) SetWriteDeadline(d time.Time) error {
	if err := t.rc.SetWriteDeadline(d); err != nil && err != http.ErrNotSupported {
		return err
	}
	return nil
}

// CloseGracefully ends the reader's wait; the stream ends when the GET
// handler, which runs the connection, returns.
func (t *SSE) CloseGracefully(time.Time) { t.end() }

// Abort also cuts a write the client is not reading.
func (t *SSE) Abort() {
	t.end()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live {
		_ = t.rc.SetWriteDeadline(time.Now())
	}
}

// HandlerDone marks the GET response as finished: it must not be touched
// any more. The write deadline of the close is lifted first, as the socket
// may serve further requests.
func (t *SSE) HandlerDone() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live = false
	_ = t.rc.SetWriteDeadline(time.Time{})
}

var _ Conn = (*SSE)(nil)
