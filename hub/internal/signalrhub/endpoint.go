package signalrhub

import (
	"net/http"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
)

// Response texts of ASP.NET's connection dispatcher.
const (
	errMsgNoID           = "Connection ID required"
	errMsgUnknownID      = "No Connection with that ID"
	errMsgChangeKind     = "Cannot change transports mid-connection"
	errMsgPostToWS       = "POST requests are not allowed for WebSocket connections."
	errMsgDeleteNotPoll  = "Cannot terminate this connection using the DELETE endpoint."
	errMsgShuttingDown   = core.ShuttingDownText
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
		transport.WriteText(w, http.StatusMethodNotAllowed, "Method not allowed.")
	}
}

// requestedKind tells the transports apart as ASP.NET does: a WebSocket
// upgrade, an Accept of text/event-stream, or else Long Polling.
func requestedKind(r *http.Request) transport.Kind {
	switch {
	case websocket.IsWebSocketUpgrade(r):
		return transport.KindWebSockets
	case strings.Contains(r.Header.Get("Accept"), "text/event-stream"):
		return transport.KindServerSentEvents
	}
	return transport.KindLongPolling
}

func (h *Hub) serveGet(w http.ResponseWriter, r *http.Request, direct identity) {
	kind := requestedKind(r)
	if kind == transport.KindLongPolling {
		transport.SetPollHeaders(w)
	}
	token := r.URL.Query().Get("id")
	if token == "" {
		h.serveWithoutID(w, r, kind, direct)
		return
	}
	e, claimed, status := h.tokens.Claim(token, kind, h.Now())
	switch {
	case claimed && h.IsClosed():
		// A closing hub takes no new connections; polls and sends of those
		// it has still go through, so they can collect their Close.
		h.tokens.Release(token)
		transport.WriteText(w, http.StatusServiceUnavailable, errMsgShuttingDown)
	case status == http.StatusBadRequest:
		transport.WriteText(w, status, errMsgChangeKind)
	case status == http.StatusConflict:
		transport.WriteText(w, status, errMsgAlreadyRunning)
	case status != http.StatusOK:
		transport.WriteText(w, status, errMsgUnknownID)
	case !claimed:
		e.Conn.lp.ServePoll(w, r, h.cfg.PollTimeout)
	case kind == transport.KindWebSockets:
		h.serveWebSocket(w, r, e.Who, func() { h.tokens.Release(token) })
	case kind == transport.KindServerSentEvents:
		defer h.tokens.Release(token)
		h.serveSSE(w, r, token, e.Who)
	default:
		h.startLongPolling(w, token, e.Who)
	}
}

// serveWithoutID opens a WebSocket that skipped negotiate (within the
// quota); the other transports need the id negotiate gave.
func (h *Hub) serveWithoutID(w http.ResponseWriter, r *http.Request, kind transport.Kind, direct identity) {
	switch {
	case kind != transport.KindWebSockets:
		transport.WriteText(w, http.StatusBadRequest, errMsgNoID)
	case h.IsClosed():
		transport.WriteText(w, http.StatusServiceUnavailable, errMsgShuttingDown)
	case direct.space == nil:
		transport.WriteText(w, http.StatusNotFound, errMsgUnknownID)
	case !h.ReserveConnection():
		h.RefuseOverQuota(w)
	default:
		direct.id = core.NewID()
		h.serveWebSocket(w, r, direct, h.ReleaseConnection)
	}
}

// serveWebSocket upgrades and serves the connection on a goroutine of its
// own, so that the HTTP server's request state goes when the handler
// returns (transport.HijackRecorder); release runs when the connection
// ends, or at once when it never starts.
func (h *Hub) serveWebSocket(w http.ResponseWriter, r *http.Request, who identity, release func()) {
	hj := &transport.HijackRecorder{ResponseWriter: w}
	ws, err := h.upgrader.Upgrade(hj, r, nil)
	if err != nil {
		release()
		h.Log.Debug().Err(err).Msg("websocket upgrade failed")
		return
	}
	t := transport.WebSocket{WS: ws, Reader: hj.Reader}
	c := newConn(h, t, who)
	t.FlushBeforeControl(c.flush)
	if !h.lifetime.Track(c) {
		release()
		c.t.Abort()
		return
	}
	transport.Serve(func() {
		defer release()
		defer h.Conns.Done()
		c.serve()
	})
}

// serveSSE runs a Server-Sent Events connection on the GET's goroutine. The
// connection takes POSTs before the stream opens: a client may send its
// handshake as soon as it sees the opening comment.
func (h *Hub) serveSSE(w http.ResponseWriter, r *http.Request, token string, who identity) {
	t := transport.NewSSE(w, r)
	defer t.HandlerDone()
	c := newConn(h, t, who)
	c.textOnly = true
	if !h.lifetime.Track(c) {
		transport.WriteText(w, http.StatusServiceUnavailable, errMsgShuttingDown)
		return
	}
	defer h.Conns.Done()
	h.tokens.Attach(token, c)
	if err := t.Open(); err != nil {
		h.Log.Debug().Err(err).Msg("event stream failed to start")
		t.StopReading()
		h.untrack(c)
		return
	}
	c.serve()
}

// startLongPolling answers the first poll at once (200, no data), as
// ASP.NET does, and runs the connection on its own goroutine until it ends.
func (h *Hub) startLongPolling(w http.ResponseWriter, token string, who identity) {
	t := transport.NewLongPolling(h.Now)
	c := newConn(h, t, who)
	c.lp = t
	if !h.lifetime.Track(c) {
		h.tokens.Release(token)
		transport.WriteText(w, http.StatusServiceUnavailable, errMsgShuttingDown)
		return
	}
	h.tokens.Attach(token, c)
	go func() {
		defer h.Conns.Done()
		defer h.tokens.Release(token)
		c.serve()
	}()
	transport.WritePollEmpty(w, http.StatusOK)
}

// connOfRequest finds the connection a POST or DELETE names by its id,
// answering the request itself (and reporting !ok) when it names none.
func (h *Hub) connOfRequest(w http.ResponseWriter, r *http.Request) (c *conn, kind transport.Kind, ok bool) {
	token := r.URL.Query().Get("id")
	if token == "" {
		transport.WriteText(w, http.StatusBadRequest, errMsgNoID)
		return nil, kind, false
	}
	c, kind, status := h.tokens.Lookup(token)
	if status != http.StatusOK {
		transport.WriteText(w, status, errMsgUnknownID)
		return nil, kind, false
	}
	return c, kind, true
}

// servePost is the send half of Server-Sent Events and Long Polling.
func (h *Hub) servePost(w http.ResponseWriter, r *http.Request) {
	c, kind, ok := h.connOfRequest(w, r)
	switch {
	case !ok:
	case kind == transport.KindWebSockets:
		transport.WriteText(w, http.StatusMethodNotAllowed, errMsgPostToWS)
	default:
		c.httpInbox().ServePost(w, r)
	}
}

// serveDelete ends a Long Polling connection: its waiting poll gets 204.
func (h *Hub) serveDelete(w http.ResponseWriter, r *http.Request) {
	c, kind, ok := h.connOfRequest(w, r)
	switch {
	case !ok:
	case kind != transport.KindLongPolling:
		transport.WriteText(w, http.StatusBadRequest, errMsgDeleteNotPoll)
	default:
		c.lp.Terminate()
		transport.WriteText(w, http.StatusAccepted, "")
	}
}

// httpInbox is the POST side of a Server-Sent Events or Long Polling
// connection.
func (c *conn) httpInbox() *transport.Inbox {
	if c.lp != nil {
		return &c.lp.Inbox
	}
	return &c.t.(*transport.SSE).Inbox
}
