package aspnethub

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
)

// maxSendBytes bounds a message a client sends.
const maxSendBytes = 64 * 1024

// writeTimeout bounds one write to a client.
const writeTimeout = 10 * time.Second

// stream is a forever transport's way of writing: a frame, a keep-alive,
// and bytes as they are (the start of a stream).
type stream struct {
	frame     func(frame []byte) error
	keepAlive func() error
	raw       func(b []byte) error
}

// runTransport serves c on tr from cursor on; init answers a connect.
func (h *Hub) runTransport(w http.ResponseWriter, r *http.Request, tr aspnet.Transport, c *conn, cursor uint64, init bool) {
	if !c.attach() {
		transport.WriteText(w, http.StatusBadRequest, errMsgGone)
		return
	}
	defer c.detach()
	switch tr {
	case aspnet.WebSockets:
		h.serveWebSocket(w, r, c, cursor, init)
	case aspnet.ServerSentEvents:
		h.serveSSE(w, r, c, cursor, init)
	case aspnet.ForeverFrame:
		h.serveForeverFrame(w, r, c, cursor, init)
	default:
		h.serveLongPoll(w, r, c, cursor, init)
	}
}

// pump writes c's envelopes from cursor on, and keep-alives, until the
// connection or the request ends or a write fails.
func (h *Hub) pump(ctx context.Context, c *conn, cursor uint64, init bool, s stream) {
	buf := make([]byte, 0, 512)
	var err error
	if init {
		buf, cursor, _ = c.envelope(buf[:0], cursor, true)
		err = s.frame(buf)
	}
	for err == nil && c.awaitWake(ctx) {
		switch {
		case c.pending(cursor):
			buf, cursor, _ = c.envelope(buf[:0], cursor, false)
			err = s.frame(buf)
		case c.keepAliveDue():
			err = s.keepAlive()
		}
	}
}

// httpStream writes a forever transport onto an HTTP response, flushing
// each write.
func httpStream(w http.ResponseWriter, appendFrame func(dst, frame []byte) []byte, keepAlive string) stream {
	rc := http.NewResponseController(w)
	var out []byte
	write := func(b []byte) error {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	return stream{
		frame:     func(frame []byte) error { out = appendFrame(out[:0], frame); return write(out) },
		keepAlive: func() error { return write([]byte(keepAlive)) },
		raw:       write,
	}
}

// serveSSE opens an event stream with its init event; a connect's init
// envelope follows it.
func (h *Hub) serveSSE(w http.ResponseWriter, r *http.Request, c *conn, cursor uint64, init bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	s := httpStream(w, aspnet.AppendSSEData, aspnet.SSEKeepAlive)
	if s.raw([]byte(aspnet.SSEInitialized)) == nil {
		h.pump(r.Context(), c, cursor, init, s)
	}
}

// serveForeverFrame opens the page of iframe frameId, then writes scripts.
func (h *Hub) serveForeverFrame(w http.ResponseWriter, r *http.Request, c *conn, cursor uint64, init bool) {
	frameID, err := strconv.ParseUint(r.URL.Query().Get(aspnet.QueryFrameID), 10, 32)
	if err != nil {
		transport.WriteText(w, http.StatusBadRequest, errMsgBadFrameID)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.Header().Set("Cache-Control", "no-cache")
	s := httpStream(w, aspnet.AppendForeverFrameScript, aspnet.ForeverFrameKeepAlive)
	if s.raw(aspnet.AppendForeverFramePreamble(nil, uint32(frameID))) == nil {
		h.pump(r.Context(), c, cursor, init, s)
	}
}

// serveLongPoll answers a connect at once with the init envelope, and a
// poll or reconnect with the messages from cursor on as soon as there are
// any, or an empty envelope after the connection timeout.
func (h *Hub) serveLongPoll(w http.ResponseWriter, r *http.Request, c *conn, cursor uint64, init bool) {
	if !init {
		h.waitForMessages(r.Context(), c, cursor)
	}
	out, _, _ := c.envelope(nil, cursor, init)
	writeJSON(w, string(out))
}

func (h *Hub) waitForMessages(ctx context.Context, c *conn, cursor uint64) {
	timer := time.NewTimer(h.cfg.ConnectionTimeout)
	defer timer.Stop()
	for !c.pending(cursor) {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		case <-c.wake:
		}
	}
}

// parseCursor reads a messageId; anything else than a cursor of this hub
// starts from the oldest message kept.
func parseCursor(messageID string) uint64 {
	n, _ := strconv.ParseUint(messageID, 10, 64)
	return n
}
