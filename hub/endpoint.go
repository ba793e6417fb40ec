package hub

import (
	"net/http"
	"strings"

	"github.com/gorilla/websocket"
)

// Response texts of ASP.NET's connection dispatcher.
const (
	errMsgNoID           = "Connection ID required"
	errMsgUnknownID      = "No Connection with that ID"
	errMsgChangeKind     = "Cannot change transports mid-connection"
	errMsgPostToWS       = "POST requests are not allowed for WebSocket connections."
	errMsgDeleteNotPoll  = "Cannot terminate this connection using the DELETE endpoint."
	errMsgShuttingDown   = "The hub is shutting down."
	errMsgAlreadyRunning = "The connection is already in use by another request."
)

// serveConnection serves a transport endpoint: GET opens WebSockets,
// Server-Sent Events or Long Polling (and polls), POST sends, DELETE ends
// a Long Polling connection. direct is the identity a WebSocket gets when it
// skips negotiate; a nil direct.space refuses that.
func (h *Hub) serveConnection(w http.ResponseWriter, r *http.Request, direct identity) {
	switch r.Method {
	case http.MethodGet:
		h.serveGet(w, r, direct)
	case http.MethodPost:
		h.servePost(w, r)
	case http.MethodDelete:
		h.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeText(w, http.StatusMethodNotAllowed, "Method not allowed.")
	}
}

// requestedKind tells the transports apart as ASP.NET does: a WebSocket
// upgrade, an Accept of text/event-stream, or else Long Polling.
func requestedKind(r *http.Request) transportKind {
	switch {
	case websocket.IsWebSocketUpgrade(r):
		return kindWebSockets
	case strings.Contains(r.Header.Get("Accept"), "text/event-stream"):
		return kindServerSentEvents
	}
	return kindLongPolling
}

func (h *Hub) serveGet(w http.ResponseWriter, r *http.Request, direct identity) {
	kind := requestedKind(r)
	if kind == kindLongPolling {
		setPollHeaders(w)
	}
	token := r.URL.Query().Get("id")
	if token == "" {
		h.serveWithoutID(w, r, kind, direct)
		return
	}
	e, claimed, status := h.tokens.claim(token, kind, h.now())
	switch {
	case claimed && h.isClosed():
		// A closing hub takes no new connections; polls and sends of those
		// it has still go through, so they can collect their Close.
		h.tokens.release(token)
		writeText(w, http.StatusServiceUnavailable, errMsgShuttingDown)
	case status == http.StatusBadRequest:
		writeText(w, status, errMsgChangeKind)
	case status == http.StatusConflict:
		writeText(w, status, errMsgAlreadyRunning)
	case status != http.StatusOK:
		writeText(w, status, errMsgUnknownID)
	case !claimed:
		e.conn.lp.servePoll(w, r, h.opts.PollTimeout)
	case kind == kindWebSockets:
		defer h.tokens.release(token)
		h.serveWebSocket(w, r, e.identity)
	case kind == kindServerSentEvents:
		defer h.tokens.release(token)
		h.serveSSE(w, r, token, e.identity)
	default:
		h.startLongPolling(w, token, e.identity)
	}
}

// serveWithoutID opens a WebSocket that skipped negotiate (within the
// quota); the other transports need the id negotiate gave.
func (h *Hub) serveWithoutID(w http.ResponseWriter, r *http.Request, kind transportKind, direct identity) {
	switch {
	case kind != kindWebSockets:
		writeText(w, http.StatusBadRequest, errMsgNoID)
	case h.isClosed():
		writeText(w, http.StatusServiceUnavailable, errMsgShuttingDown)
	case direct.space == nil:
		writeText(w, http.StatusNotFound, errMsgUnknownID)
	case !h.tokens.reserveDirect(h.opts.connectionQuota()):
		h.refuseOverQuota(w)
	default:
		defer h.tokens.releaseDirect()
		direct.id = newID()
		h.serveWebSocket(w, r, direct)
	}
}

func (h *Hub) serveWebSocket(w http.ResponseWriter, r *http.Request, who identity) {
	hj := &hijackRecorder{ResponseWriter: w}
	ws, err := h.upgrader.Upgrade(hj, r, nil)
	if err != nil {
		h.log.Debug().Err(err).Msg("websocket upgrade failed")
		return
	}
	c := newConn(h, wsTransport{ws: ws, br: hj.br}, who)
	if !h.track(c) {
		c.t.Abort()
		return
	}
	defer h.conns.Done()
	c.serve()
}

// serveSSE runs a Server-Sent Events connection on the GET's goroutine. The
// connection takes POSTs before the stream opens: a client may send its
// handshake as soon as it sees the opening comment.
func (h *Hub) serveSSE(w http.ResponseWriter, r *http.Request, token string, who identity) {
	t := newSSETransport(w, r)
	defer t.handlerDone()
	c := newConn(h, t, who)
	c.textOnly = true
	if !h.track(c) {
		writeText(w, http.StatusServiceUnavailable, errMsgShuttingDown)
		return
	}
	defer h.conns.Done()
	h.tokens.attach(token, c)
	if err := t.open(); err != nil {
		h.log.Debug().Err(err).Msg("event stream failed to start")
		t.stopReading()
		h.untrack(c)
		return
	}
	c.serve()
}

// startLongPolling answers the first poll at once (200, no data), as
// ASP.NET does, and runs the connection on its own goroutine until it ends.
func (h *Hub) startLongPolling(w http.ResponseWriter, token string, who identity) {
	t := newLPTransport(h.now)
	c := newConn(h, t, who)
	c.lp = t
	if !h.track(c) {
		h.tokens.release(token)
		writeText(w, http.StatusServiceUnavailable, errMsgShuttingDown)
		return
	}
	h.tokens.attach(token, c)
	go func() {
		defer h.conns.Done()
		defer h.tokens.release(token)
		c.serve()
	}()
	writePollEmpty(w, http.StatusOK)
}

// servePost is the send half of Server-Sent Events and Long Polling.
func (h *Hub) servePost(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("id")
	if token == "" {
		writeText(w, http.StatusBadRequest, errMsgNoID)
		return
	}
	c, kind, status := h.tokens.lookup(token)
	switch {
	case status != http.StatusOK:
		writeText(w, status, errMsgUnknownID)
	case kind == kindWebSockets:
		writeText(w, http.StatusMethodNotAllowed, errMsgPostToWS)
	default:
		c.httpInbox().servePost(w, r)
	}
}

// serveDelete ends a Long Polling connection: its waiting poll gets 204.
func (h *Hub) serveDelete(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("id")
	if token == "" {
		writeText(w, http.StatusBadRequest, errMsgNoID)
		return
	}
	c, kind, status := h.tokens.lookup(token)
	switch {
	case status != http.StatusOK:
		writeText(w, status, errMsgUnknownID)
	case kind != kindLongPolling:
		writeText(w, http.StatusBadRequest, errMsgDeleteNotPoll)
	default:
		c.lp.terminate()
		writeText(w, http.StatusAccepted, "")
	}
}

// httpInbox is the POST side of a Server-Sent Events or Long Polling
// connection.
func (c *conn) httpInbox() *inbox {
	if c.lp != nil {
		return &c.lp.inbox
	}
	return &c.t.(*sseTransport).inbox
}
