package hub

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"time"
)

// sseTransport is the Server-Sent Events transport: the hub writes to the
// client on one long GET response, one event per message, and the client
// sends by POST. It carries text only.
type sseTransport struct {
	inbox
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

func newSSETransport(w http.ResponseWriter, r *http.Request) *sseTransport {
	return &sseTransport{inbox: newInbox(), w: w, rc: http.NewResponseController(w), gone: r.Context().Done(), live: true}
}

// open sends the event stream's headers and its opening comment, which
// some browsers need before they report the stream open.
func (t *sseTransport) open() error {
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

func (t *sseTransport) NextReader() (io.Reader, error) { return t.next(t.gone) }
func (t *sseTransport) StopReading()                   { t.stopReading() }
func (t *sseTransport) Buffered() int                  { return t.buffered() }

// WriteMessage sends data as one unnamed event: every line of it becomes a
// "data:" field (the client joins them with LF again), and a blank line
// ends the event.
func (t *sseTransport) WriteMessage(_ bool, data []byte) error {
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

func (t *sseTransport) writeAll(parts ...[]byte) error {
	for _, p := range parts {
		if _, err := t.w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

func (t *sseTransport) SetReadDeadline(d time.Time) error { t.setReadDeadline(d); return nil }

func (t *sseTransport) SetWriteDeadline(d time.Time) error {
	if err := t.rc.SetWriteDeadline(d); err != nil && err != http.ErrNotSupported {
		return err
	}
	return nil
}

// CloseGracefully ends the reader's wait; the stream ends when the GET
// handler, which runs the connection, returns.
func (t *sseTransport) CloseGracefully(time.Time) { t.end() }

// Abort also cuts a write the client is not reading.
func (t *sseTransport) Abort() {
	t.end()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live {
		_ = t.rc.SetWriteDeadline(time.Now())
	}
}

// handlerDone marks the GET response as finished: it must not be touched
// any more. The write deadline of the close is lifted first, as the socket
// may serve further requests.
func (t *sseTransport) handlerDone() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live = false
	_ = t.rc.SetWriteDeadline(time.Time{})
}

var _ transport = (*sseTransport)(nil)
