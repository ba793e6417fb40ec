package aspnethub

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
)

// The emulation of Azure SignalR Service in ASP.NET mode, after
// Azure/azure-signalr's NegotiateMiddleware and ServiceEndpointProvider:
// the app server's negotiate answers {"ProtocolVersion":"2.0",
// "RedirectUrl":…,"AccessToken":…,"TryWebSockets":true}, and the client
// negotiates again and connects at the service's /aspnetclient with the
// token as a bearer header (access_token in the query on WebSockets and
// Server-Sent Events). The token is an HS256 JWT signed with the access
// key whose aud is <service>/aspnetclient.

// redirectQueryVersion is the first client protocol whose clients keep
// the query string of a RedirectUrl; older clients get a bare URL.
var redirectQueryVersion = version{2, 1, -1, -1}

// preservedQuery are the parameters the middleware leaves out of the
// redirect's query, since the client sends them itself.
var preservedQuery = map[string]bool{
	aspnet.QueryClientProtocol:  true,
	aspnet.QueryConnectionToken: true,
	aspnet.QueryConnectionData:  true,
}

// serveRedirect is the app server's negotiate in ASP.NET mode: it sends
// the client on to the service's client path with a client token (nameid
// from ?user=, if given, as the Core emulation does).
func (h *Hub) serveRedirect(w http.ResponseWriter, r *http.Request) {
	origin := core.RequestOrigins(r)[0]
	claims := azure.TokenClaims{Audience: origin + aspnet.AzureClientPath, UserID: r.URL.Query().Get("user")}
	token, err := h.IssueClientToken(claims, azure.DefaultClientTokenTTL)
	if err != nil {
		h.Log.Error().Err(err).Msg("cannot mint a client token")
		transport.WriteText(w, http.StatusInternalServerError, "The hub cannot issue a client token.")
		return
	}
	writeJSON(w, string(aspnet.AppendRedirect(nil, h.redirectURL(origin, r), token)))
}

// redirectURL is the service's client URL. For clients that keep its query
// it carries the negotiate's own parameters but those the client adds
// itself, a request id and the app's path, in the middleware's order.
func (h *Hub) redirectURL(origin string, r *http.Request) string {
	u := origin + aspnet.AzureClientPath
	if v, ok := parseVersion(r.URL.Query().Get(aspnet.QueryClientProtocol)); !ok || v.compare(redirectQueryVersion) < 0 {
		return u
	}
	var q strings.Builder
	for _, pair := range strings.Split(r.URL.RawQuery, "&") {
		key, value, _ := strings.Cut(pair, "=")
		key, kerr := url.QueryUnescape(key)
		value, verr := url.QueryUnescape(value)
		if pair == "" || kerr != nil || verr != nil || preservedQuery[key] {
			continue
		}
		q.WriteString(escapeDataString(key) + "=" + escapeDataString(value) + "&")
	}
	q.WriteString(aspnet.AzureQueryRequestID + "=" + core.NewID())
	return u + "?" + q.String() + "&" + aspnet.AzureQueryOriginalPath + "=" + url.QueryEscape(h.cfg.Path)
}

// escapeDataString escapes as .NET's Uri.EscapeDataString does: all but
// letters, digits and -._~, a space as %20.
func escapeDataString(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }

// authorizeClient checks the client token of a request to the service's
// client path, and answers 401 when it does not verify.
func (h *Hub) authorizeClient(w http.ResponseWriter, r *http.Request) bool {
	if _, err := h.Authorize(r, aspnet.AzureClientPath); err != nil {
		transport.WriteText(w, http.StatusUnauthorized, h.Unauthorized(err))
		return false
	}
	return true
}
