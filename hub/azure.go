package hub

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/signalr"
)

// The emulation of Azure SignalR Service: clients negotiate at
// /client/negotiate?hub=<hub> and connect at /client/?hub=<hub>&id=...
// with a client token; the REST API (azure_rest.go) wants a token per
// request. Tokens are HS256 JWTs signed with Options.AccessKey, checked by
// azure.VerifyToken against the audience the service would expect.

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
	claims, err := h.authorize(r, "/client/?hub="+url.QueryEscape(name))
	if err != nil {
		transport.WriteText(w, http.StatusUnauthorized, h.unauthorized(err))
		return
	}
	if !negotiate {
		h.serveConnection(w, r, identity{}) // the service has no skip-negotiation
		return
	}
	s, ok := h.spaceNamed(name)
	if !ok {
		transport.WriteText(w, http.StatusServiceUnavailable, "Too many hub names.")
		return
	}
	h.serveNegotiate(w, r, identity{space: s, user: claims.UserID})
}

// clientHubName returns the hub query parameter, lower-cased as the service
// SDKs send it; the service refuses more than one.
func clientHubName(r *http.Request) (string, bool) {
	values := r.URL.Query()["hub"]
	if len(values) != 1 || !validHubName(values[0]) {
		return "", false
	}
	return strings.ToLower(values[0]), true
}

// validHubName applies the service's rule: a letter, then letters, digits
// or '_'.
func validHubName(name string) bool {
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

// authorize checks the request's HS256 token (signed with the hub's key)
// against the audience <scheme>://<host><target>, for any of targets. The
// host is also tried without its port, which is how tokens are minted for
// connection strings with a Port key. Nothing of the token reaches the log.
func (h *Hub) authorize(r *http.Request, targets ...string) (azure.TokenClaims, error) {
	token := bearerToken(r)
	if token == "" {
		return azure.TokenClaims{}, errNoToken
	}
	claims, err := h.verifyAudiences(token, r, targets)
	if err != nil {
		h.log.Debug().Str("reason", tokenFailure(err)).Str("path", r.URL.Path).Msg("token refused")
	}
	return claims, err
}

var errNoToken = errors.New("hub: no bearer token")

// verifyAudiences tries each audience until one matches; a failure other
// than the audience ends the search.
func (h *Hub) verifyAudiences(token string, r *http.Request, targets []string) (azure.TokenClaims, error) {
	err := azure.ErrTokenAudience
	for _, origin := range requestOrigins(r) {
		for _, target := range targets {
			claims, verr := azure.VerifyToken(h.key, token, origin+target, time.Now())
			if verr == nil || !errors.Is(verr, azure.ErrTokenAudience) {
				return claims, verr
			}
			err = verr
		}
	}
	return azure.TokenClaims{}, err
}

func bearerToken(r *http.Request) string {
	if auth := r.Header.Get("Authorization"); len(auth) > 7 && strings.EqualFold(auth[:7], "Bearer ") {
		return strings.TrimSpace(auth[7:])
	}
	return r.URL.Query().Get("access_token")
}

// tokenFailure names why a token was refused without quoting it.
func tokenFailure(err error) string {
	for _, known := range []error{azure.ErrTokenSignature, azure.ErrTokenAudience, azure.ErrTokenExpired,
		azure.ErrTokenNotYetValid, azure.ErrTokenAlgorithm, azure.ErrTokenMalformed} {
		if errors.Is(err, known) {
			return known.Error()
		}
	}
	return "invalid token"
}

// requestOrigins is scheme://host of the request, then the same without
// the port if it has one.
func requestOrigins(r *http.Request) []string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	origins := []string{scheme + "://" + r.Host}
	if host, _, err := net.SplitHostPort(r.Host); err == nil {
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		origins = append(origins, scheme+"://"+host)
	}
	return origins
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
	clientURL := requestOrigins(r)[0] + "/client/?hub=" + url.QueryEscape(h.home.name)
	token, err := h.issueClientToken(azure.TokenClaims{Audience: clientURL, UserID: r.URL.Query().Get("user")}, azure.DefaultClientTokenTTL)
	if err != nil {
		h.log.Error().Err(err).Msg("cannot mint a client token")
		writeJSON(w, http.StatusInternalServerError, signalr.NegotiateError{Error: "The hub cannot issue a client token."})
		return
	}
	writeJSON(w, http.StatusOK, signalr.NegotiateRedirect{URL: clientURL, AccessToken: token})
}
