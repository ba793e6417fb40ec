package core

import (
	"crypto/rand"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/azure/oidc"
)

// The resources Microsoft Entra ID issues tokens for, one per service:
// the scope a client asks for is the resource + "/.default", and the
// token's aud is the resource (the Azure SDKs' credential scopes, e.g.
// Azure/azure-signalr's AsrsDefaultScope).
const (
	SignalRResource   = "https://signalr.azure.com"
	WebPubSubResource = "https://webpubsub.azure.com"
)

// LocalAuthDisabledText is the 401 answer to a token signed with an
// access key when local auth is disabled. The services' exact words were
// not found in their public docs or issues; this says what their docs say
// the setting does ("connection with AccessKey won't work").
const LocalAuthDisabledText = "Unauthorized: local authentication (AccessKey) is disabled for this resource; use Microsoft Entra ID."

// audiences are the aud values accepted for resource: as the SDKs ask for
// it, and with the trailing slash Entra writes when the scope has one.
func audiences(resource string) []string { return []string{resource, resource + "/"} }

// IsResource matches an aud value naming resource, with or without its
// trailing slash.
func IsResource(resource string) func(string) bool {
	return func(aud string) bool { return strings.TrimSuffix(aud, "/") == resource }
}

// newEntraVerifier is nil without an issuer.
func newEntraVerifier(cfg Config) (*oidc.Verifier, error) {
	if cfg.EntraIssuer == "" {
		return nil, nil
	}
	return oidc.NewVerifier(cfg.EntraIssuer, cfg.EntraHTTPClient)
}

// azureKey is what the hub signs and checks its HS256 tokens with: the
// access key, or, when local auth is disabled or there is no access key,
// a random key of the hub's own, which signs the client tokens it issues
// (as the service signs those of :generateToken with keys of its own) and
// nothing a caller could make. Nil when the Azure emulation is off.
func azureKey(cfg Config) []byte {
	switch {
	case cfg.AccessKey != "" && !cfg.DisableLocalAuth:
		return []byte(cfg.AccessKey)
	case cfg.AccessKey != "" || cfg.EntraIssuer != "":
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		return key
	}
	return nil
}

// EmulatesAzure reports whether the hub serves the Azure services' client
// endpoints and REST APIs: with an access key, an Entra issuer or both.
func (h *Host) EmulatesAzure() bool { return h.key != nil }

// Authorize checks the request's HS256 token (signed with the hub's key)
// against the audience <scheme>://<host><target>, for any of targets. The
// host is also tried without its port, which is how tokens are minted for
// connection strings with a Port key. Nothing of the token reaches the log.
func (h *Host) Authorize(r *http.Request, targets ...string) (azure.TokenClaims, error) {
	token := BearerToken(r)
	if token == "" {
		return azure.TokenClaims{}, errNoToken
	}
	claims, err := h.verifyAudiences(token, r, targets)
	if err != nil {
		h.Log.Debug().Str("reason", tokenFailure(err)).Str("path", r.URL.Path).Msg("token refused")
	}
	return claims, err
}

var errNoToken = errors.New("hub: no bearer token")

// verifyAudiences tries each audience until one matches; a failure other
// than the audience ends the search.
func (h *Host) verifyAudiences(token string, r *http.Request, targets []string) (azure.TokenClaims, error) {
	err := azure.ErrTokenAudience
	for _, origin := range RequestOrigins(r) {
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

// BearerToken is the request's token: from its Authorization header, or
// from access_token where browsers cannot set headers.
func BearerToken(r *http.Request) string {
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

// RequestOrigins is scheme://host of the request, then the same without
// the port if it has one.
func RequestOrigins(r *http.Request) []string {
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

// EntraAudience reads, unverified, the aud of an RS256 token: what only an
// Entra token is. ok is false for any other token, or without an issuer.
// It only routes a request; AuthorizeREST verifies it.
func (h *Host) EntraAudience(token string) (aud []string, ok bool) {
	if h.entra == nil || token == "" {
		return nil, false
	}
	var claims jwt.RegisteredClaims
	parsed, _, err := jwt.NewParser().ParseUnverified(token, &claims)
	if err != nil || parsed.Method != jwt.SigningMethodRS256 {
		return nil, false
	}
	return claims.Audience, true
}

// AuthorizeREST checks a REST request's bearer: an Entra token for
// resource, or a token signed with the access key for one of targets
// (see Authorize).
func (h *Host) AuthorizeREST(r *http.Request, resource string, targets ...string) error {
	token := BearerToken(r)
	if _, entra := h.EntraAudience(token); !entra {
		_, err := h.Authorize(r, targets...)
		return err
	}
	_, err := h.entra.Verify(r.Context(), token, audiences(resource)...)
	switch {
	case errors.Is(err, oidc.ErrKeysUnavailable):
		h.Log.Warn().Err(err).Msg("Entra token refused: the issuer's keys cannot be fetched")
	case err != nil:
		h.Log.Debug().Str("reason", err.Error()).Str("path", r.URL.Path).Msg("Entra token refused")
	}
	return err
}

// Unauthorized is the 401 text for a refused token: LocalAuthDisabledText
// for an HS256 token whose signature the hub's own key does not verify,
// which with local auth disabled is one signed with the access key.
func (h *Host) Unauthorized(err error) string {
	if h.Config.DisableLocalAuth && errors.Is(err, azure.ErrTokenSignature) {
		return LocalAuthDisabledText
	}
	return "Unauthorized."
}
