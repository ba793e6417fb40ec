package azure

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// SignalRGenerateTokenAPIVersion is the api-version of Azure SignalR
// Service's :generateToken, the first stable one that has it.
const SignalRGenerateTokenAPIVersion = "2022-11-01"

// generatedToken is what :generateToken answers on both services.
type generatedToken struct {
	Token string `json:"token"`
}

// ClientToken is the token a client of the hub connects with as userID
// (none when empty), valid for ttl (DefaultClientTokenTTL when <= 0):
// minted from the access key, or, for a string that signs in with
// Microsoft Entra ID and so holds no key, asked of the service's
// :generateToken with the client's bearer token.
func (c *RESTClient) ClientToken(ctx context.Context, userID string, ttl time.Duration) (string, error) {
	ttl = ttlOr(ttl, DefaultClientTokenTTL)
	if !c.cs.Entra() {
		return ClientToken(c.cs, c.hub, userID, ttl)
	}
	q := url.Values{"api-version": {SignalRGenerateTokenAPIVersion}, "minutesToExpire": {strconv.Itoa(tokenMinutes(ttl))}}
	if userID != "" {
		q.Set("userId", userID)
	}
	path := "/api/hubs/" + azureEscape(c.hub) + "/:generateToken"
	call := restCall{op: "generate token", method: http.MethodPost, url: c.serverBase + path + "?" + q.Encode(),
		audience: c.audienceBase + path, want: restWantSuccess}
	return c.t.generateToken(ctx, call)
}

// ClientToken is the token a Web PubSub client of the hub connects with as
// userID (none when empty) with roles, valid for ttl (DefaultClientTokenTTL
// when <= 0): minted from the access key, or asked of the service's
// :generateToken when the string signs in with Microsoft Entra ID.
func (c *WebPubSubRESTClient) ClientToken(ctx context.Context, userID string, roles []string, ttl time.Duration) (string, error) {
	ttl = ttlOr(ttl, DefaultClientTokenTTL)
	if !c.cs.Entra() {
		return WebPubSubClientToken(c.cs, c.hub, userID, roles, ttl)
	}
	return c.t.generateToken(ctx, c.call("generate token", c.urls.GenerateToken(userID, roles, tokenMinutes(ttl)), nil, ""))
}

// generateToken sends a :generateToken call and returns the token of its
// answer.
func (t *restTransport) generateToken(ctx context.Context, call restCall) (string, error) {
	var out generatedToken
	call.out = &out
	if err := t.do(ctx, call); err != nil {
		return "", err
	}
	if out.Token == "" {
		return "", errors.New("azure: REST generate token: the service answered without a token")
	}
	return out.Token, nil
}

// tokenMinutes rounds ttl up to whole minutes, at least one.
func tokenMinutes(ttl time.Duration) int {
	return max(1, int((ttl+time.Minute-1)/time.Minute))
}
