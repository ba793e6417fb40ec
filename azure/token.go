package azure

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
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

// TokenClaims are the claims Azure SignalR Service and Azure Web PubSub
// read from an access token. Zero times and empty values are left out of a
// minted token, except ExpiresAt, which both services require.
type TokenClaims struct {
	Audience  string    // aud: the URL the token is for
	ExpiresAt time.Time // exp
	IssuedAt  time.Time // iat
	NotBefore time.Time // nbf
	UserID    string    // nameid: the SignalR user id that user-targeted sends address
	// Subject is sub: the Web PubSub user id (SignalR reads nameid instead).
	Subject string
	// Roles is role, always minted as an array: the Web PubSub permissions,
	// such as WebPubSubRoleSendToGroup.
	Roles []string
	// Groups is webpubsub.group: the Web PubSub groups the connection
	// joins on connect. MintToken writes it; VerifyToken does not read it.
	Groups []string
}

// MintToken signs claims as an HS256 JWT with the header {"alg":"HS256",
// "typ":"JWT"}. key is the AccessKey string's UTF-8 bytes (not
// base64-decoded), which is how the service checks it. Times go out as
// whole seconds, aud as a single string.
func MintToken(key []byte, claims TokenClaims) (string, error) {
	switch {
	case len(key) == 0:
		return "", errors.New("azure: token: empty signing key")
	case claims.Audience == "":
		return "", errors.New("azure: token: empty audience")
	case claims.ExpiresAt.IsZero():
		return "", errors.New("azure: token: no expiry")
	}
	payload := jwt.MapClaims{"aud": claims.Audience, "exp": claims.ExpiresAt.Unix()}
	if !claims.IssuedAt.IsZero() {
		payload["iat"] = claims.IssuedAt.Unix()
	}
	if !claims.NotBefore.IsZero() {
		payload["nbf"] = claims.NotBefore.Unix()
	}
	if claims.UserID != "" {
		payload["nameid"] = claims.UserID
	}
	if claims.Subject != "" {
		payload["sub"] = claims.Subject
	}
	if len(claims.Roles) > 0 {
		payload["role"] = claims.Roles
	}
	if len(claims.Groups) > 0 {
		payload["webpubsub.group"] = claims.Groups
	}
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, payload).SignedString(key)
	if err != nil {
		return "", fmt.Errorf("azure: token: %w", err)
	}
	return token, nil
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

func azureClientAudience(cs ConnectionString, hub string) string {
	return cs.Endpoint() + "/client/?hub=" + url.QueryEscape(strings.ToLower(hub))
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
// with key, aud containing audience (compared exactly: no case folding, no
// trailing-slash trimming), now before exp and not before nbf, with no
// leeway for clock skew. It returns the token's claims, with Audience set
// to the one matched. Errors wrap one of the ErrToken* values and never
// quote the token or key.
func VerifyToken(key []byte, token, audience string, now time.Time) (TokenClaims, error) {
	if len(key) == 0 || audience == "" {
		return TokenClaims{}, errors.New("azure: verify token: empty key or audience")
	}
	if len(token) > azureMaxTokenLen {
		return TokenClaims{}, fmt.Errorf("%w: longer than %d bytes", ErrTokenMalformed, azureMaxTokenLen)
	}
	var claims verifiedClaims
	var refused error // why the key function turned the header down
	parsed, err := jwt.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		refused = checkTokenHeader(t)
		if refused != nil {
			return nil, refused
		}
		return key, nil
	}, jwt.WithAudience(audience), jwt.WithExpirationRequired(), jwt.WithStrictDecoding(),
		jwt.WithTimeFunc(func() time.Time { return now }))
	switch {
	case refused != nil:
		return TokenClaims{}, refused
	case err != nil:
		return TokenClaims{}, tokenRefusal(err, parsed, &claims, audience)
	}
	return TokenClaims{
		Audience:  audience,
		ExpiresAt: claims.ExpiresAt.time(),
		IssuedAt:  claims.IssuedAt.time(),
		NotBefore: claims.NotBefore.time(),
		UserID:    claims.UserID,
		Subject:   claims.Subject,
		Roles:     claims.Roles,
	}, nil
}

// checkTokenHeader is the check golang-jwt leaves to the key function: the
// alg must be HS256 itself (not "none", another HMAC or a public-key alg
// that would take key as a public key), and RFC 7515 requires refusing a
// crit header naming extensions we do not understand, which is all of them.
func checkTokenHeader(t *jwt.Token) error {
	if t.Method != jwt.SigningMethodHS256 {
		return fmt.Errorf("%w: alg %q", ErrTokenAlgorithm, azureTruncate(t.Method.Alg(), 16))
	}
	if _, has := t.Header["crit"]; has {
		return fmt.Errorf("%w: unsupported crit header", ErrTokenMalformed)
	}
	return nil
}

// tokenRefusal maps golang-jwt's verdict onto one ErrToken* value. The
// validator reports every failed claim at once; the first in this order
// wins, so an expired token for another audience is expired (the hub tries
// other audiences only on ErrTokenAudience). golang-jwt's own messages are
// not passed on: they may quote pieces of the decoded token.
func tokenRefusal(err error, parsed *jwt.Token, claims *verifiedClaims, audience string) error {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return fmt.Errorf("%w: not three base64url parts holding a JSON header and claims of the right types", ErrTokenMalformed)
	case errors.Is(err, jwt.ErrTokenUnverifiable): // alg missing or unknown
		return fmt.Errorf("%w: alg %q", ErrTokenAlgorithm, azureTruncate(headerAlg(parsed), 16))
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return ErrTokenSignature
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && claims.ExpiresAt == nil:
		return fmt.Errorf("%w: no exp claim", ErrTokenMalformed)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return fmt.Errorf("%w: no aud claim, or an empty one", ErrTokenMalformed)
	case errors.Is(err, jwt.ErrTokenExpired):
		return fmt.Errorf("%w at %s", ErrTokenExpired, claims.ExpiresAt.UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return fmt.Errorf("%w until %s", ErrTokenNotYetValid, claims.NotBefore.UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return fmt.Errorf("%w: expected %q, token has %s", ErrTokenAudience, audience, azureQuoteShort(claims.Audience))
	}
	return fmt.Errorf("%w: claims refused", ErrTokenMalformed)
}

func headerAlg(parsed *jwt.Token) string {
	if parsed == nil {
		return ""
	}
	alg, _ := parsed.Header["alg"].(string)
	return alg
}

// verifiedClaims are the claims VerifyToken reads; aud may be a string or
// an array of strings (RFC 7519 allows both), and so may role (.NET's token
// handler writes a single role as a string).
type verifiedClaims struct {
	Audience  jwt.ClaimStrings `json:"aud"`
	ExpiresAt *exactDate       `json:"exp"`
	IssuedAt  *exactDate       `json:"iat"`
	NotBefore *exactDate       `json:"nbf"`
	UserID    string           `json:"nameid"`
	Subject   string           `json:"sub"`
	Roles     jwt.ClaimStrings `json:"role"`
}

func (c *verifiedClaims) GetAudience() (jwt.ClaimStrings, error) { return c.Audience, nil }
func (c *verifiedClaims) GetExpirationTime() (*jwt.NumericDate, error) {
	return c.ExpiresAt.numeric(), nil
}
func (c *verifiedClaims) GetIssuedAt() (*jwt.NumericDate, error)  { return c.IssuedAt.numeric(), nil }
func (c *verifiedClaims) GetNotBefore() (*jwt.NumericDate, error) { return c.NotBefore.numeric(), nil }
func (c *verifiedClaims) GetIssuer() (string, error)              { return "", nil }
func (c *verifiedClaims) GetSubject() (string, error)             { return c.Subject, nil }

// exactDate is a NumericDate kept to the nanosecond. golang-jwt's own
// NumericDate truncates to jwt.TimePrecision (a second unless a program
// changes that global), which would expire a token with exp = now+0.5 s
// half a second early.
type exactDate struct{ time.Time }

func (d *exactDate) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.Abs(f) > 1e15 {
		return errors.New("a time claim is not a number of seconds")
	}
	sec, frac := math.Modf(f)
	d.Time = time.Unix(int64(sec), int64(frac*1e9))
	return nil
}

func (d *exactDate) numeric() *jwt.NumericDate {
	if d == nil {
		return nil
	}
	return &jwt.NumericDate{Time: d.Time}
}

// time is the date, or the zero time when the claim is absent.
func (d *exactDate) time() time.Time {
	if d == nil {
		return time.Time{}
	}
	return d.Time
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
