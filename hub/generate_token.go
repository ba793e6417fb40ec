package hub

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
)

// :generateToken on both services' REST APIs (POST
// /api/hubs/{hub}/:generateToken, Azure/azure-rest-api-specs and
// Azure/azure-signalr's swagger): the service mints a client token for
// the caller, who may hold only an Entra token, and answers {"token"}.

// maxTokenMinutes bounds minutesToExpire: a year.
const maxTokenMinutes = 365 * 24 * 60

// tokenRequest is a :generateToken call's query.
type tokenRequest struct {
	userID string
	ttl    time.Duration
	roles  []string // Web PubSub: role, repeated
	groups []string // Web PubSub: group, repeated, joined on connect
}

// parseTokenRequest reads userId and minutesToExpire (60 by default), and
// for Web PubSub role, group and clientType; invalid says what is wrong.
func parseTokenRequest(q url.Values, webPubSub bool) (req tokenRequest, invalid string) {
	req.userID, req.ttl = q.Get("userId"), azure.DefaultClientTokenTTL
	if m := q.Get("minutesToExpire"); m != "" {
		n, err := strconv.Atoi(m)
		if err != nil || n < 1 || n > maxTokenMinutes {
			return req, "minutesToExpire must be a whole number of minutes from 1 to " + strconv.Itoa(maxTokenMinutes) + "."
		}
		req.ttl = time.Duration(n) * time.Minute
	}
	if !webPubSub {
		return req, ""
	}
	req.roles, req.groups = q["role"], q["group"]
	switch ct := q.Get("clientType"); {
	case ct != "" && !strings.EqualFold(ct, "Default"):
		return req, "The reference hub issues tokens for clientType Default only."
	case len(req.roles)+len(req.groups) > maxTokenRoles:
		return req, "Too many roles and groups."
	}
	for _, g := range req.groups {
		if !validWPSGroup(g) {
			return req, "The group name must be 1 to 1024 characters."
		}
	}
	return req, ""
}

// signalRGenerateToken answers a token for the client endpoint of hub
// (already lower-cased), nameid userId.
func (h *Hub) signalRGenerateToken(w http.ResponseWriter, r *http.Request, hub string) {
	req, invalid := parseTokenRequest(r.URL.Query(), false)
	if invalid != "" {
		transport.WriteText(w, http.StatusBadRequest, invalid)
		return
	}
	claims := azure.TokenClaims{Audience: requestOrigins(r)[0] + "/client/?hub=" + url.QueryEscape(hub), UserID: req.userID}
	token, err := h.issueClientToken(claims, req.ttl)
	if err != nil {
		h.log.Error().Err(err).Msg("cannot mint a client token")
		transport.WriteText(w, http.StatusInternalServerError, "The hub cannot issue a client token.")
		return
	}
	writeJSON(w, http.StatusOK, clientTokenResponse{token})
}

// wpsGenerateToken answers a token for /client/hubs/{hub} as the path
// spells hub (the client connects to the same spelling), sub userId.
func (h *Hub) wpsGenerateToken(c *wpsCall) {
	req, invalid := parseTokenRequest(c.r.URL.Query(), true)
	if invalid != "" {
		wpsError(c.w, http.StatusBadRequest, invalid)
		return
	}
	claims := azure.TokenClaims{
		Audience: requestOrigins(c.r)[0] + wpsHubPrefix + url.PathEscape(c.hub),
		Subject:  req.userID, Roles: req.roles, Groups: req.groups,
	}
	token, err := h.issueClientToken(claims, req.ttl)
	if err != nil {
		h.log.Error().Err(err).Msg("cannot mint a client token")
		wpsError(c.w, http.StatusInternalServerError, "The hub cannot issue a client token.")
		return
	}
	writeJSON(c.w, http.StatusOK, clientTokenResponse{token})
}

// clientTokenResponse is ClientTokenResponse of both services' swagger.
type clientTokenResponse struct {
	Token string `json:"token"`
}

// issueClientToken signs claims with the hub's key (see azureKey), valid
// from now for ttl.
func (h *Hub) issueClientToken(claims azure.TokenClaims, ttl time.Duration) (string, error) {
	now := time.Now()
	claims.IssuedAt, claims.NotBefore, claims.ExpiresAt = now, now, now.Add(ttl)
	return azure.MintToken(h.key, claims)
}
