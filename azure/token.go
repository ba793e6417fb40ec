package azure

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
)

// Token lifetimes used when a caller passes ttl <= 0. One hour is the
// service SDK's default client-token lifetime; REST tokens are minted per
// request, and an hour leaves room for clock skew against the service.
const (
	DefaultClientTokenTTL = time.Hour
	DefaultRESTTokenTTL   = time.Hour
)

// azureMaxTokenLen bounds the work VerifyToken does on hostile input; the
// service itself refuses tokens over 4 KB.
const azureMaxTokenLen = 16 << 10

// Token verification failures. VerifyToken wraps one of them.
var (
	ErrTokenMalformed   = errors.New("azure: malformed token")
	ErrTokenAlgorithm   = errors.New("azure: token algorithm is not HS256")
	ErrTokenSignature   = errors.New("azure: token signature does not match the key")
	ErrTokenExpired     = errors.New("azure: token expired")
	ErrTokenNotYetValid = errors.New("azure: token not valid yet")
	ErrTokenAudience    = errors.New("azure: token audience mismatch")
)

// TokenClaims are the claims Azure SignalR Service reads from an access
// token. Zero times are left out of a minted token, except ExpiresAt, which
// the service requires.
type TokenClaims struct {
	Audience  string    // aud: the URL the token is for
	ExpiresAt time.Time // exp
	IssuedAt  time.Time // iat
	NotBefore time.Time // nbf
	UserID    string    // nameid: the user id that user-targeted sends address
}

var azureJWTHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

type azureJWTPayload struct {
	Audience  string `json:"aud"`
	ExpiresAt int64  `json:"exp"`
	IssuedAt  int64  `json:"iat,omitempty"`
	NotBefore int64  `json:"nbf,omitempty"`
	UserID    string `json:"nameid,omitempty"`
}

// MintToken signs claims as an HS256 JWT. key is the AccessKey string's
// UTF-8 bytes (not base64-decoded), which is how the service checks it.
func MintToken(key []byte, claims TokenClaims) (string, error) {
	switch {
	case len(key) == 0:
		return "", errors.New("azure: token: empty signing key")
	case claims.Audience == "":
		return "", errors.New("azure: token: empty audience")
	case claims.ExpiresAt.IsZero():
		return "", errors.New("azure: token: no expiry")
	}
	payload, err := json.Marshal(azureJWTPayload{
		Audience:  claims.Audience,
		ExpiresAt: claims.ExpiresAt.Unix(),
		IssuedAt:  azureUnix(claims.IssuedAt),
		NotBefore: azureUnix(claims.NotBefore),
		UserID:    claims.UserID,
	})
	if err != nil {
		return "", fmt.Errorf("azure: token: %w", err)
	}
	signingInput := azureJWTHeader + "." + base64.RawURLEncoding.EncodeToString(payload)
	return signingInput + "." + base64.RawURLEncoding.EncodeToString(azureHS256(key, signingInput)), nil
}

func azureUnix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func azureHS256(key []byte, signingInput string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signingInput))
	return m.Sum(nil)
}

// ClientToken mints the token a serverless negotiate hands to a client of
// hub: aud is {Endpoint}/client/?hub=<hub>, built on the Endpoint key as the
// service SDKs do (so without the Port key, and not on ClientEndpoint);
// nameid is userID when it is not empty. ttl <= 0 means DefaultClientTokenTTL.
func ClientToken(cs ConnectionString, hub, userID string, ttl time.Duration) (string, error) {
	if err := azureCheckHub(hub); err != nil {
		return "", err
	}
	return azureMint(cs, azureClientAudience(cs, hub), userID, ttlOr(ttl, DefaultClientTokenTTL), time.Now())
}

// RESTToken mints the token for one REST request: aud is the request URL
// without query or trailing '/', on the Endpoint key's scheme and host
// (the request itself may go to ServerEndpoint or the Port key's port).
// ttl <= 0 means DefaultRESTTokenTTL.
func RESTToken(cs ConnectionString, requestURL string, ttl time.Duration) (string, error) {
	u, err := url.Parse(requestURL)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return "", errors.New("azure: REST token: request URL is not an absolute URL")
	}
	return azureMint(cs, azureRESTAudience(cs, u.EscapedPath()), "", ttlOr(ttl, DefaultRESTTokenTTL), time.Now())
}

func azureClientAudience(cs ConnectionString, hub string) string {
	return cs.Endpoint() + "/client/?hub=" + url.QueryEscape(strings.ToLower(hub))
}

func azureRESTAudience(cs ConnectionString, escapedPath string) string {
	return csOrigin(cs.endpoint) + strings.TrimRight(escapedPath, "/")
}

// azureMint stamps iat and nbf with now, as .NET's token handler
// does, and exp with now+ttl.
func azureMint(cs ConnectionString, audience, userID string, ttl time.Duration, now time.Time) (string, error) {
	if cs.key == nil || cs.endpoint == nil {
		return "", errors.New("azure: token: connection string has no Endpoint or AccessKey")
	}
	return MintToken(cs.key.secret, TokenClaims{
		Audience:  audience,
		ExpiresAt: now.Add(ttl),
		IssuedAt:  now,
		NotBefore: now,
		UserID:    userID,
	})
}

// VerifyToken checks token the way the service does: HS256 only, signed
// with key, aud containing audience, now before exp and not before nbf.
// It returns the token's claims, with Audience set to the one matched.
// Errors wrap one of the ErrToken* values and never quote the token or key.
func VerifyToken(key []byte, token, audience string, now time.Time) (TokenClaims, error) {
	if len(key) == 0 || audience == "" {
		return TokenClaims{}, errors.New("azure: verify token: empty key or audience")
	}
	payload, err := azureVerifySignature(key, token)
	if err != nil {
		return TokenClaims{}, err
	}
	claims, audiences, err := azureDecodeClaims(payload)
	if err != nil {
		return TokenClaims{}, err
	}
	switch {
	case claims.ExpiresAt.IsZero():
		return TokenClaims{}, fmt.Errorf("%w: no exp claim", ErrTokenMalformed)
	case !now.Before(claims.ExpiresAt):
		return TokenClaims{}, fmt.Errorf("%w at %s", ErrTokenExpired, claims.ExpiresAt.UTC().Format(time.RFC3339))
	case !claims.NotBefore.IsZero() && now.Before(claims.NotBefore):
		return TokenClaims{}, fmt.Errorf("%w until %s", ErrTokenNotYetValid, claims.NotBefore.UTC().Format(time.RFC3339))
	}
	for _, a := range audiences {
		if a == audience {
			claims.Audience = a
			return claims, nil
		}
	}
	return TokenClaims{}, fmt.Errorf("%w: expected %q, token has %s", ErrTokenAudience, audience, azureQuoteShort(audiences))
}

// azureVerifySignature checks the header and signature and returns the
// decoded payload.
func azureVerifySignature(key []byte, token string) ([]byte, error) {
	if len(token) > azureMaxTokenLen {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrTokenMalformed, azureMaxTokenLen)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: not three dot-separated parts", ErrTokenMalformed)
	}
	if err := azureCheckHeader(parts[0]); err != nil {
		return nil, err
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(parts[2])
	if err != nil {
		return nil, fmt.Errorf("%w: signature is not base64url", ErrTokenMalformed)
	}
	if !hmac.Equal(sig, azureHS256(key, parts[0]+"."+parts[1])) {
		return nil, ErrTokenSignature
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("%w: payload is not base64url", ErrTokenMalformed)
	}
	return payload, nil
}

func azureCheckHeader(segment string) error {
	raw, err := base64.RawURLEncoding.DecodeString(segment)
	if err != nil {
		return fmt.Errorf("%w: header is not base64url", ErrTokenMalformed)
	}
	var h struct {
		Alg  string          `json:"alg"`
		Crit json.RawMessage `json:"crit"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return fmt.Errorf("%w: header is not a JSON object", ErrTokenMalformed)
	}
	if h.Alg != "HS256" {
		return fmt.Errorf("%w: alg %q", ErrTokenAlgorithm, azureTruncate(h.Alg, 16))
	}
	if h.Crit != nil {
		return fmt.Errorf("%w: unsupported crit header", ErrTokenMalformed)
	}
	return nil
}

// azureDecodeClaims reads the claims the service uses; aud may be a string or
// an array of strings (RFC 7519 allows both).
func azureDecodeClaims(payload []byte) (TokenClaims, []string, error) {
	var p struct {
		Audience  json.RawMessage `json:"aud"`
		ExpiresAt *json.Number    `json:"exp"`
		IssuedAt  *json.Number    `json:"iat"`
		NotBefore *json.Number    `json:"nbf"`
		UserID    string          `json:"nameid"`
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return TokenClaims{}, nil, fmt.Errorf("%w: claims are not a valid JSON object", ErrTokenMalformed)
	}
	audiences, err := azureDecodeAudience(p.Audience)
	if err != nil {
		return TokenClaims{}, nil, err
	}
	var c TokenClaims
	c.UserID = p.UserID
	for _, f := range []struct {
		n   *json.Number
		dst *time.Time
	}{{p.ExpiresAt, &c.ExpiresAt}, {p.IssuedAt, &c.IssuedAt}, {p.NotBefore, &c.NotBefore}} {
		if *f.dst, err = azureNumericDate(f.n); err != nil {
			return TokenClaims{}, nil, err
		}
	}
	return c, audiences, nil
}

func azureDecodeAudience(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("%w: no aud claim", ErrTokenMalformed)
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("%w: aud is neither a string nor an array of strings", ErrTokenMalformed)
	}
	return many, nil
}

// azureNumericDate converts a JWT NumericDate (seconds, possibly fractional).
func azureNumericDate(n *json.Number) (time.Time, error) {
	if n == nil {
		return time.Time{}, nil
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.Abs(f) > 1e15 {
		return time.Time{}, fmt.Errorf("%w: a time claim is not a number of seconds", ErrTokenMalformed)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), nil
}

func azureQuoteShort(values []string) string {
	q := make([]string, 0, min(len(values), 4))
	for i, v := range values {
		if i == 4 {
			q = append(q, "...")
			break
		}
		q = append(q, fmt.Sprintf("%q", azureTruncate(v, 256)))
	}
	return "[" + strings.Join(q, " ") + "]"
}

func azureTruncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// azureCheckHub applies the service's rule: a letter, then letters, digits
// or '_'.
func azureCheckHub(hub string) error {
	if hub == "" {
		return errors.New("azure: hub name is empty")
	}
	for i := 0; i < len(hub); i++ {
		c := hub[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '_')) {
			return fmt.Errorf("azure: hub name %q must start with a letter and hold only letters, digits and '_'", azureTruncate(hub, 64))
		}
	}
	return nil
}

// ttlOr is ttl, or def when ttl is not positive.
func ttlOr(ttl, def time.Duration) time.Duration {
	if ttl <= 0 {
		return def
	}
	return ttl
}
