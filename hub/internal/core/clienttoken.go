package core

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/azure"
)

// :generateToken on both services' REST APIs (POST
// /api/hubs/{hub}/:generateToken, Azure/azure-rest-api-specs and
// Azure/azure-signalr's swagger): the service mints a client token for
// the caller, who may hold only an Entra token, and answers {"token"}.

// MaxRESTBody is the services' limit on a REST request body (and the
// hub's on an event handler's answer).
const MaxRESTBody = 1 << 20

// maxTokenMinutes bounds minutesToExpire: a year.
const maxTokenMinutes = 365 * 24 * 60

// TokenRequest is what both services' :generateToken read from the query.
type TokenRequest struct {
	UserID string
	TTL    time.Duration
}

// ParseTokenRequest reads userId and minutesToExpire (60 by default);
// invalid says what is wrong.
func ParseTokenRequest(q url.Values) (req TokenRequest, invalid string) {
	req.UserID, req.TTL = q.Get("userId"), azure.DefaultClientTokenTTL
	if m := q.Get("minutesToExpire"); m != "" {
		n, err := strconv.Atoi(m)
		if err != nil || n < 1 || n > maxTokenMinutes {
			return req, "minutesToExpire must be a whole number of minutes from 1 to " + strconv.Itoa(maxTokenMinutes) + "."
		}
		req.TTL = time.Duration(n) * time.Minute
	}
	return req, ""
}

// IssueClientToken signs claims with the hub's key (see azureKey), valid
// from now for ttl.
func (h *Host) IssueClientToken(claims azure.TokenClaims, ttl time.Duration) (string, error) {
	now := time.Now()
	claims.IssuedAt, claims.NotBefore, claims.ExpiresAt = now, now, now.Add(ttl)
	return azure.MintToken(h.key, claims)
}

// AnswerClientToken answers :generateToken with a client token for claims,
// as ClientTokenResponse of both services' swagger; a token that cannot be
// minted is answered 500 through fail, the service's own error writer.
func (h *Host) AnswerClientToken(w http.ResponseWriter, claims azure.TokenClaims, ttl time.Duration,
	fail func(w http.ResponseWriter, status int, msg string)) {
	token, err := h.IssueClientToken(claims, ttl)
	if err != nil {
		h.Log.Error().Err(err).Msg("cannot mint a client token")
		fail(w, http.StatusInternalServerError, "The hub cannot issue a client token.")
		return
	}
	WriteJSON(w, http.StatusOK, struct {
		Token string `json:"token"`
	}{token})
}

// WriteJSON answers with v, uncached.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v) // only hub-built structs of strings and ints
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
