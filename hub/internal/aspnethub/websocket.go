package aspnethub

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
)

// wsOut is a WebSocket connection's way out, shared by its reader and its
// pump: the envelopes from the cursor on, keep-alives, and the results of
// invocations. The reader answers an invocation with the envelopes it
// produced (Echo's Measure) and its result in one write, so the client
// gets both in one segment instead of one wake-up each.
type wsOut struct {
	ws   *websocket.Conn
	cork *transport.Cork
	mu   sync.Mutex
	// answering is set while the reader runs an invocation, whose answer
	// takes what the invocation owes the client: the pump, woken by it,
	// leaves it to the reader rather than send it apart. Set and read
	// under mu, so a pump that found it clear has written what it found
	// before the invocation can owe anything.
	answering bool
	cursor    uint64
	buf       []byte
}

// startAnswer marks the invocation the reader is about to run.
func (o *wsOut) startAnswer() {
	o.mu.Lock()
	o.answering = true
	o.mu.Unlock()
}

// answer is the reader's flush, with the invocation's result: the
// envelope owed, if any, and the result go out in one segment.
func (o *wsOut) answer(c *conn, result []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	// Cleared before the reader looks at what is owed: whatever arrives
	// after that look wakes a pump that no longer leaves it to the reader.
	o.answering = false
	return o.flushLocked(c, result)
}

// flush is the pump's: the envelope owed, or a keep-alive the heartbeat
// asked for, unless the reader is answering an invocation.
func (o *wsOut) flush(c *conn) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.answering {
		return nil
	}
	return o.flushLocked(c, nil)
}

// flushLocked writes, in one segment, the envelope the client is owed (or
// a keep-alive, when there is no result to send), then result when there
// is one. o.mu is held.
func (o *wsOut) flushLocked(c *conn, result []byte) error {
	o.cork.Hold()
	err := o.writeOwed(c, result == nil)
	if err == nil && result != nil {
		err = o.write(result)
	}
	if rerr := o.cork.Release(); err == nil {
		err = rerr
	}
	return err
}

func (o *wsOut) writeOwed(c *conn, keepAlive bool) error {
	switch {
	case c.pending(o.cursor):
		o.buf, o.cursor, _ = c.envelope(o.buf[:0], o.cursor, false)
		return o.write(o.buf)
	case keepAlive && c.keepAliveDue():
		return o.write([]byte(aspnet.KeepAlive))
	}
	return nil
}

// write sends one text frame; o.mu is held.
func (o *wsOut) write(b []byte) error {
	_ = o.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return o.ws.WriteMessage(websocket.TextMessage, b)
}

// pump writes what the connection is owed each time it is woken, until the
// connection or ctx ends or a write fails. init answers a connect.
func (o *wsOut) pump(ctx context.Context, c *conn, init bool) {
	if init {
		o.mu.Lock()
		o.buf, o.cursor, _ = c.envelope(o.buf[:0], o.cursor, true)
		err := o.write(o.buf)
		o.mu.Unlock()
		if err != nil {
			return
		}
	}
	for c.awaitWake(ctx) {
		if o.flush(c) != nil {
			return
		}
	}
}

// serveWebSocket upgrades and runs the connection's reader beside its
// pump; the results of invocations share the socket with the envelopes.
func (h *Hub) serveWebSocket(w http.ResponseWriter, r *http.Request, c *conn, cursor uint64, init bool) {
	out := &wsOut{cork: &transport.Cork{}, cursor: cursor, buf: make([]byte, 0, 512)}
	ws, err := h.upgrader.Upgrade(transport.CorkHijacker{ResponseWriter: w, Cork: out.cork}, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	out.ws = ws
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		defer cancel()
		h.readWebSocket(ws, c, out)
	}()
	out.pump(ctx, c, init)
	_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
}

// readWebSocket invokes each message the client sends and writes its
// result, until the socket fails or closes.
func (h *Hub) readWebSocket(ws *websocket.Conn, c *conn, out *wsOut) {
	ws.SetReadLimit(maxSendBytes)
	var inv aspnet.Invocation
	var result []byte
	for {
		_, r, err := ws.NextReader()
		if err != nil {
			return
		}
		data, err := readMessage(r)
		if err == nil {
			out.startAnswer()
			result = h.invoke(result[:0], c, data, &inv)
			core.ReleaseReadBuffer(data) // what the invocation keeps, it copied
			err = out.answer(c, result)
		}
		if err != nil {
			return
		}
	}
}

// readMessage reads one WebSocket message into a buffer lent by the hub's
// pool; the read limit bounds it.
func readMessage(r io.Reader) ([]byte, error) {
	b := core.ReadBuffer()
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		switch {
		case err == io.EOF:
			return b, nil
		case err != nil:
			return nil, err
		}
	}
}
