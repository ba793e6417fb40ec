package signalrhub

import (
	"net/http"
	"strconv"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/signalr"
)

// maxNegotiateVersion is the newest negotiate protocol the hub speaks.
const maxNegotiateVersion = 1

// servedTransports lists exactly what the hub serves; Server-Sent Events
// carry text only.
var servedTransports = []signalr.AvailableTransport{
	{Transport: "WebSockets", TransferFormats: []signalr.TransferFormat{signalr.TextFormat, signalr.BinaryFormat}},
	{Transport: "ServerSentEvents", TransferFormats: []signalr.TransferFormat{signalr.TextFormat}},
	{Transport: "LongPolling", TransferFormats: []signalr.TransferFormat{signalr.TextFormat, signalr.BinaryFormat}},
}

// serveNegotiate answers a negotiate for a connection of who.space (and
// who.user); the id is chosen here.
func (h *Hub) serveNegotiate(w http.ResponseWriter, r *http.Request, who identity) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		transport.WriteText(w, http.StatusMethodNotAllowed, "Method not allowed.")
		return
	}
	version, ok := negotiateVersion(r.URL.Query().Get("negotiateVersion"))
	if !ok {
		core.WriteJSON(w, http.StatusBadRequest, signalr.NegotiateError{Error: "The client requested an invalid protocol version."})
		return
	}
	if h.IsClosed() {
		transport.WriteText(w, http.StatusServiceUnavailable, core.ShuttingDownText)
		return
	}
	who.id = core.NewID()
	resp := signalr.NegotiateResponse{NegotiateVersion: version, ConnectionID: who.id, AvailableTransports: servedTransports}
	token := resp.ConnectionID // version 0 clients use the id as the token
	if version > 0 {
		resp.ConnectionToken = core.NewID()
		token = resp.ConnectionToken
	}
	switch h.tokens.Add(token, who, h.Now()+int64(h.negotiateTTL)) {
	case http.StatusTooManyRequests:
		h.RefuseOverQuota(w)
	case http.StatusServiceUnavailable:
		transport.WriteText(w, http.StatusServiceUnavailable, "Too many pending connections.")
	default:
		core.WriteJSON(w, http.StatusOK, resp)
	}
}

// negotiateVersion picks the lower of the client's version and the hub's;
// a missing version means 0.
func negotiateVersion(q string) (int, bool) {
	if q == "" {
		return 0, true
	}
	v, err := strconv.Atoi(q)
	if err != nil || v < 0 {
		return 0, false
	}
	return min(v, maxNegotiateVersion), true
}
