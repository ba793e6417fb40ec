package signalrhub

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/signalr"
)

// The emulation of Azure SignalR Service: clients negotiate at
// /client/negotiate?hub=<hub> and connect at /client/?hub=<hub>&id=...
// with a client token; the REST API (rest.go) wants a token per request.
// Tokens are HS256 JWTs signed with the access key, checked by the host
// (core.Host.Authorize) against the audience the service would expect.

// serveClient serves the client endpoints. Every request, transports
// included, carries the client token (as a bearer header, or as
// access_token where browsers cannot set headers); its nameid becomes the
// connection's user id.
func (h *Hub) serveClient(w http.ResponseWriter, r *http.Request, negotiate bool) {
	name, ok := clientHubName(r)
	if !ok {
		transport.WriteText(w, http.StatusBadRequest, "The request needs exactly one valid hub query parameter.")
		return
	}
	claims, err := h.Authorize(r, "/client/?hub="+url.QueryEscape(name))
	if err != nil {
		transport.WriteText(w, http.StatusUnauthorized, h.Unauthorized(err))
		return
	}
	if !negotiate {
		h.serveConnection(w, r, identity{}) // the service has no skip-negotiation
		return
	}
	s, ok := h.spaces.Named(name)
	if !ok {
		transport.WriteText(w, http.StatusServiceUnavailable, core.TooManySpacesText)
		return
	}
	h.serveNegotiate(w, r, identity{space: s, user: claims.UserID})
}

// clientHubName returns the hub query parameter, lower-cased as the service
// SDKs send it; the service refuses more than one.
func clientHubName(r *http.Request) (string, bool) {
	values := r.URL.Query()["hub"]
	if len(values) != 1 || !ValidHubName(values[0]) {
		return "", false
	}
	return strings.ToLower(values[0]), true
}

// ValidHubName applies the service's rule: a letter, then letters, digits
// or '_'.
func ValidHubName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '_')) {
			return false
		}
	}
	return true
}

// serveRedirect is the app server's negotiate in Azure SignalR Service's
// default mode: it sends the client on to the client endpoint with a client
// token for the app path's hub name (nameid from ?user=, if given).
func (h *Hub) serveRedirect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		transport.WriteText(w, http.StatusMethodNotAllowed, "Method not allowed.")
		return
	}
	clientURL := core.RequestOrigins(r)[0] + "/client/?hub=" + url.QueryEscape(h.home.Name)
	token, err := h.IssueClientToken(azure.TokenClaims{Audience: clientURL, UserID: r.URL.Query().Get("user")}, azure.DefaultClientTokenTTL)
	if err != nil {
		h.Log.Error().Err(err).Msg("cannot mint a client token")
		core.WriteJSON(w, http.StatusInternalServerError, signalr.NegotiateError{Error: "The hub cannot issue a client token."})
		return
	}
	core.WriteJSON(w, http.StatusOK, signalr.NegotiateRedirect{URL: clientURL, AccessToken: token})
}
