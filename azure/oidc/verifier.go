// Package oidc verifies the bearer tokens an OpenID Connect issuer such as
// Microsoft Entra ID signs: RS256 JWTs whose keys the issuer publishes at
// the jwks_uri of its discovery document, chosen by the token's kid.
package oidc

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Leeway is the clock skew allowed on exp and nbf.
const Leeway = time.Minute

// MinRefetchInterval bounds how often the issuer's keys are fetched again
// for a token whose kid they do not hold: a stream of tokens with made-up
// kids must not turn into a stream of requests to the issuer.
const MinRefetchInterval = time.Minute

// maxTokenLen bounds the work Verify does on hostile input.
const maxTokenLen = 16 << 10

// Verification failures; Verify wraps one of them and never quotes the
// token.
var (
	ErrMalformed       = errors.New("oidc: malformed token")
	ErrAlgorithm       = errors.New("oidc: token algorithm is not RS256")
	ErrUnknownKey      = errors.New("oidc: token names a key the issuer does not publish")
	ErrSignature       = errors.New("oidc: token signature does not verify")
	ErrIssuer          = errors.New("oidc: token issuer mismatch")
	ErrAudience        = errors.New("oidc: token audience mismatch")
	ErrExpired         = errors.New("oidc: token expired")
	ErrNotYetValid     = errors.New("oidc: token not valid yet")
	ErrKeysUnavailable = errors.New("oidc: the issuer's keys could not be fetched")
)

// Verifier checks tokens from one issuer. It fetches the discovery
// document and the keys on first use, and again (at most once per
// MinRefetchInterval) when a token names a kid it does not hold, which is
// how it follows the issuer's key rollover. It is safe for concurrent use.
type Verifier struct {
	issuer string
	client *http.Client
	now    func() time.Time

	fetchMu sync.Mutex // one fetch at a time
	mu      sync.RWMutex
	keys    map[string]*rsa.PublicKey
	fetched time.Time // when a fetch was last tried; zero before the first
}

// NewVerifier checks tokens whose iss is issuer, an https URL, fetching
// with client; a nil client uses the system's roots of trust (which
// SSL_CERT_FILE can point elsewhere) and a timeout.
func NewVerifier(issuer string, client *http.Client) (*Verifier, error) {
	if err := CheckIssuer(issuer); err != nil {
		return nil, err
	}
	if client == nil {
		client = &http.Client{Timeout: fetchTimeout}
	}
	return &Verifier{issuer: issuer, client: client, now: time.Now, keys: map[string]*rsa.PublicKey{}}, nil
}

// CheckIssuer says what is wrong with an issuer URL, if anything: it must
// be https, with a host and no query or fragment.
func CheckIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	switch {
	case err != nil || u.Host == "" || u.User != nil:
		return errors.New("oidc: the issuer must be an absolute https URL")
	case u.Scheme != "https":
		return fmt.Errorf("oidc: the issuer must be an https URL, not %s", u.Scheme)
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("oidc: the issuer must have no query or fragment")
	}
	return nil
}

// Issuer is the iss the verifier accepts.
func (v *Verifier) Issuer() string { return v.issuer }

// Claims are what a verified token says about its holder.
type Claims struct {
	Audience  string // the one of the expected audiences it is for
	Subject   string // sub
	ObjectID  string // oid: the user's or service principal's object
	AppID     string // appid (v1 tokens) or azp (v2): the client application
	TenantID  string // tid
	ExpiresAt time.Time
}

type tokenClaims struct {
	jwt.RegisteredClaims
	ObjectID string `json:"oid"`
	AppID    string `json:"appid"`
	AZP      string `json:"azp"`
	TenantID string `json:"tid"`
}

// Verify checks token: RS256 with the issuer's key named by kid, iss the
// issuer, aud one of audiences, exp in the future and nbf in the past
// (with Leeway). ctx bounds a fetch of the keys it may need.
func (v *Verifier) Verify(ctx context.Context, token string, audiences ...string) (Claims, error) {
	if len(token) > maxTokenLen {
		return Claims{}, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, maxTokenLen)
	}
	var claims tokenClaims
	var keyErr error // why the key function found no key
	_, err := jwt.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		var key *rsa.PublicKey
		key, keyErr = v.keyFor(ctx, t)
		return key, keyErr
	}, jwt.WithIssuer(v.issuer), jwt.WithAudience(audiences...), jwt.WithExpirationRequired(), jwt.WithLeeway(Leeway),
		jwt.WithTimeFunc(v.now), jwt.WithStrictDecoding())
	if err != nil {
		return Claims{}, refusal(err, keyErr)
	}
	return Claims{
		Audience:  matchedAudience(claims.Audience, audiences),
		Subject:   claims.Subject,
		ObjectID:  claims.ObjectID,
		AppID:     firstOf(claims.AppID, claims.AZP),
		TenantID:  claims.TenantID,
		ExpiresAt: claims.ExpiresAt.Time,
	}, nil
}

// keyFor is the key the header names. It checks the alg itself (rather
// than leaving it to golang-jwt's WithValidMethods) so that a token of
// another alg is refused as such, and first, so that it never causes a
// fetch; an HMAC token can never be checked against a public key.
func (v *Verifier) keyFor(ctx context.Context, t *jwt.Token) (*rsa.PublicKey, error) {
	if t.Method != jwt.SigningMethodRS256 {
		return nil, ErrAlgorithm
	}
	if _, has := t.Header["crit"]; has {
		return nil, fmt.Errorf("%w: unsupported crit header", ErrMalformed)
	}
	kid, _ := t.Header["kid"].(string)
	if kid == "" {
		return nil, fmt.Errorf("%w: no kid", ErrMalformed)
	}
	if key := v.lookup(kid); key != nil {
		return key, nil
	}
	if err := v.refresh(ctx); err != nil {
		return nil, err
	}
	if key := v.lookup(kid); key != nil {
		return key, nil
	}
	return nil, ErrUnknownKey
}

func (v *Verifier) lookup(kid string) *rsa.PublicKey {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.keys[kid]
}

// refusal maps golang-jwt's verdict onto one Err* value; its own messages
// are not passed on, as they may quote pieces of the token.
func refusal(err, keyErr error) error {
	switch {
	case keyErr != nil:
		return keyErr
	case errors.Is(err, jwt.ErrTokenMalformed), errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return ErrMalformed
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return ErrSignature
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return ErrAlgorithm
	case errors.Is(err, jwt.ErrTokenExpired):
		return ErrExpired
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return ErrNotYetValid
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return ErrIssuer
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return ErrAudience
	}
	return ErrMalformed
}

func matchedAudience(have jwt.ClaimStrings, want []string) string {
	for _, w := range want {
		for _, h := range have {
			if h == w {
				return w
			}
		}
	}
	return ""
}

func firstOf(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}
