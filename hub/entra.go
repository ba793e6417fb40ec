package hub

import (
	"crypto/rand"
	"errors"
	"net/http"
	"slices"
	"strings"

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

// newEntraVerifier is nil without an issuer.
func newEntraVerifier(opts Options) (*oidc.Verifier, error) {
	if opts.EntraIssuer == "" {
		return nil, nil
	}
	return oidc.NewVerifier(opts.EntraIssuer, opts.EntraHTTPClient)
}

// azureKey is what the hub signs and checks its HS256 tokens with: the
// access key, or, when local auth is disabled or there is no access key,
// a random key of the hub's own, which signs the client tokens it issues
// (as the service signs those of :generateToken with keys of its own) and
// nothing a caller could make. Nil when the Azure emulation is off.
func azureKey(opts Options) []byte {
	switch {
	case opts.AccessKey != "" && !opts.DisableLocalAuth:
		return []byte(opts.AccessKey)
	case opts.EmulatesAzure():
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		return key
	}
	return nil
}

// entraAudience reads, unverified, the aud of an RS256 token: what only an
// Entra token is. ok is false for any other token, or without an issuer.
// It only routes a request; authorizeREST verifies it.
func (h *Hub) entraAudience(token string) (aud []string, ok bool) {
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

// authorizeREST checks a REST request's bearer: an Entra token for
// resource, or a token signed with the access key for one of targets
// (see authorize).
func (h *Hub) authorizeREST(r *http.Request, resource string, targets ...string) error {
	token := bearerToken(r)
	if _, entra := h.entraAudience(token); !entra {
		_, err := h.authorize(r, targets...)
		return err
	}
	_, err := h.entra.Verify(r.Context(), token, audiences(resource)...)
	switch {
	case errors.Is(err, oidc.ErrKeysUnavailable):
		h.log.Warn().Err(err).Msg("Entra token refused: the issuer's keys cannot be fetched")
	case err != nil:
		h.log.Debug().Str("reason", err.Error()).Str("path", r.URL.Path).Msg("Entra token refused")
	}
	return err
}

// unauthorized is the 401 text for a refused token: LocalAuthDisabledText
// for an HS256 token whose signature the hub's own key does not verify,
// which with local auth disabled is one signed with the access key.
func (h *Hub) unauthorized(err error) string {
	if h.opts.DisableLocalAuth && errors.Is(err, azure.ErrTokenSignature) {
		return LocalAuthDisabledText
	}
	return "Unauthorized."
}

// forWebPubSub tells which service's REST API a request is for: the two
// share their /api/hubs/ paths. An Entra token names the service in its
// audience; otherwise the api-version tells them apart (SignalR's is
// 2022-06-01).
func (h *Hub) forWebPubSub(r *http.Request) bool {
	if aud, ok := h.entraAudience(bearerToken(r)); ok {
		switch {
		case slices.ContainsFunc(aud, isResource(WebPubSubResource)):
			return isWebPubSubPath(r.URL.Path)
		case slices.ContainsFunc(aud, isResource(SignalRResource)):
			return false
		}
	}
	return isWebPubSubREST(r)
}

func isResource(resource string) func(string) bool {
	return func(aud string) bool { return strings.TrimSuffix(aud, "/") == resource }
}
