package azure

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// requestAuth puts the Authorization header on one REST request.
type requestAuth interface {
	authorize(ctx context.Context, req *http.Request, audience string) error
}

// keyAuth signs each request with its own HS256 token whose aud is the
// request's audience.
type keyAuth struct {
	key []byte
	// notBefore stamps nbf on tokens, as .NET's token handler does for
	// SignalR; the Web PubSub SDK leaves it out.
	notBefore bool
	ttl       time.Duration
	now       func() time.Time
}

func (k keyAuth) authorize(_ context.Context, req *http.Request, audience string) error {
	now := k.now()
	claims := TokenClaims{Audience: audience, ExpiresAt: now.Add(k.ttl), IssuedAt: now}
	if k.notBefore {
		claims.NotBefore = now
	}
	token, err := MintToken(k.key, claims)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return nil
}

// bearerAuth presents a Microsoft Entra ID access token for the service's
// scope. azidentity's credentials keep their tokens in memory and refresh
// them before they expire, so asking for each request costs nothing more.
type bearerAuth struct {
	cred  azcore.TokenCredential
	scope string
}

func (b bearerAuth) authorize(ctx context.Context, req *http.Request, _ string) error {
	tok, err := b.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{b.scope}})
	if err != nil {
		return newAuthError(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	return nil
}

// newRequestAuth is how a REST client of cs signs its requests: with the
// access key, or with opts.Credential for scope when cs names an AuthType.
func newRequestAuth(cs ConnectionString, o RESTOptions, scope string, notBefore bool) (requestAuth, error) {
	if cs.entra == nil {
		if cs.key == nil {
			return nil, errors.New("azure: REST client: connection string has no AccessKey or AuthType")
		}
		return keyAuth{key: cs.AccessKey(), notBefore: notBefore, ttl: o.TokenTTL, now: o.Now}, nil
	}
	if o.Credential == nil {
		return nil, errors.New("azure: REST client: an AuthType connection string needs a credential")
	}
	return bearerAuth{cred: o.Credential, scope: scope}, nil
}

// AuthError is a failed Microsoft Entra ID sign-in. Its text names Entra's
// AADSTS error code and the first sentence of its description, never a
// token, secret or assertion (Entra does not echo them).
type AuthError struct {
	// Code is Entra's error code, such as "AADSTS7000215"; empty when the
	// failure had none (no credential available, the network).
	Code string
	// Reason is a one-line summary of what failed.
	Reason string
	Err    error
}

func (e *AuthError) Error() string {
	return "azure: Microsoft Entra ID sign-in failed: " + e.Reason
}

func (e *AuthError) Unwrap() error { return e.Err }

var aadstsPattern = regexp.MustCompile(`AADSTS[0-9]+(: [^.\r\n"\\]*)?`)

const authReasonMax = 200

func newAuthError(err error) *AuthError {
	var ae *AuthError
	if errors.As(err, &ae) {
		return ae
	}
	e := &AuthError{Err: err}
	if m := aadstsPattern.FindString(err.Error()); m != "" {
		e.Code, _, _ = strings.Cut(m, ":")
		e.Reason = m
		return e
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	e.Reason = azureTruncate(strings.TrimSpace(first), authReasonMax)
	return e
}
