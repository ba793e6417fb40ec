package aspnethub

import (
	"net/http"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
)

// serveConnection serves the requests of one connection: its token must
// verify, and (but for connect) the connection must still be there.
func (h *Hub) serveConnection(w http.ResponseWriter, r *http.Request, op string) {
	q := r.URL.Query()
	tr, err := aspnet.ParseTransport(q.Get(aspnet.QueryTransport))
	if err != nil {
		transport.WriteText(w, http.StatusBadRequest, errMsgUnknownTransport)
		return
	}
	token := q.Get(aspnet.QueryConnectionToken)
	if token == "" {
		transport.WriteText(w, http.StatusBadRequest, errMsgNoToken)
		return
	}
	id, ok := h.signer.connectionID(token)
	if !ok {
		transport.WriteText(w, http.StatusBadRequest, errMsgBadToken)
		return
	}
	if op == aspnet.PathConnect {
		h.connect(w, r, tr, id)
		return
	}
	c := h.lookup(id)
	if c == nil {
		transport.WriteText(w, http.StatusBadRequest, errMsgGone)
		return
	}
	h.serveExisting(w, r, op, tr, c)
}

func (h *Hub) serveExisting(w http.ResponseWriter, r *http.Request, op string, tr aspnet.Transport, c *conn) {
	switch op {
	case aspnet.PathStart:
		writeJSON(w, aspnet.StartResponse)
	case aspnet.PathAbort:
		h.disconnect(c)
		transport.WriteText(w, http.StatusOK, "")
	case aspnet.PathSend:
		h.serveSend(w, r, c)
	default: // reconnect, poll
		h.resume(w, r, tr, c)
	}
}

// lookup returns the open connection id names, nil when there is none.
func (h *Hub) lookup(id string) *conn {
	h.Mu.RLock()
	defer h.Mu.RUnlock()
	return h.home.Conns[id]
}

// connect opens connection id on its first transport.
func (h *Hub) connect(w http.ResponseWriter, r *http.Request, tr aspnet.Transport, id string) {
	if err := checkConnectionData(r); err != nil {
		transport.WriteText(w, http.StatusInternalServerError, err.Error())
		return
	}
	if c := h.open(w, id); c != nil {
		h.runTransport(w, r, tr, c, 0, true)
	}
}

// open admits connection id within the quota and makes it addressable;
// nil when it answered w with a refusal.
func (h *Hub) open(w http.ResponseWriter, id string) *conn {
	if h.lookup(id) != nil {
		transport.WriteText(w, http.StatusBadRequest, errMsgAlreadyOpen)
		return nil
	}
	if !h.ReserveConnection() {
		h.RefuseOverQuota(w)
		return nil
	}
	c := newConn(h, id, h.home)
	if !h.lifetime.Track(c) {
		h.ReleaseConnection()
		transport.WriteText(w, http.StatusServiceUnavailable, core.ShuttingDownText)
		return nil
	}
	if !h.lifetime.Register(c, c.space, id, "", &c.groups, nil) {
		h.disconnect(c)
		transport.WriteText(w, http.StatusServiceUnavailable, core.ShuttingDownText)
		return nil
	}
	return c
}

// resume serves a reconnect or a long poll: the groups token, when sent,
// must verify, and rejoins its groups; then the transport takes over at
// the client's cursor.
func (h *Hub) resume(w http.ResponseWriter, r *http.Request, tr aspnet.Transport, c *conn) {
	messageID, groupsToken := resumeState(r, tr)
	if groupsToken != "" {
		groups, ok := h.signer.groups(c.id, groupsToken)
		if !ok {
			transport.WriteText(w, http.StatusBadRequest, errMsgBadGroupsToken)
			return
		}
		h.rejoin(c, groups)
	}
	h.runTransport(w, r, tr, c, parseCursor(messageID), false)
}

// resumeState reads messageId and groupsToken: from the form of a long
// poll's POST, from the query string otherwise.
func resumeState(r *http.Request, tr aspnet.Transport) (messageID, groupsToken string) {
	if tr == aspnet.LongPolling && r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(nil, r.Body, maxSendBytes)
		_ = r.ParseForm() // a bad form reads as no state
		return r.PostForm.Get(aspnet.QueryMessageID), r.PostForm.Get(aspnet.QueryGroupsToken)
	}
	q := r.URL.Query()
	return q.Get(aspnet.QueryMessageID), q.Get(aspnet.QueryGroupsToken)
}
