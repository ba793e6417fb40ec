package entratest

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Claims are an access token's claims. Mint fills the zero ones: Issuer
// with Issuer(), TenantID with Tenant(), ObjectID with the client's
// service principal (a GUID fixed per client), IssuedAt and NotBefore with
// now, ExpiresAt with now plus the token lifetime.
type Claims struct {
	Issuer    string // iss
	Audience  string // aud: the resource, the scope without "/.default"
	ClientID  string // appid and azp
	TenantID  string // tid
	ObjectID  string // oid and sub
	IssuedAt  time.Time
	NotBefore time.Time
	ExpiresAt time.Time
}

// Token is an access token for clientID to resource, as the token endpoint
// would issue it, minted directly (not counted in TokenRequests).
func (s *Server) Token(t testing.TB, clientID, resource string) string {
	t.Helper()
	return s.Mint(t, Claims{ClientID: clientID, Audience: resource})
}

// Mint signs c with the tenant's current key: tokens that are wrong in a
// chosen way (audience, issuer, times).
func (s *Server) Mint(t testing.TB, c Claims) string {
	t.Helper()
	token, err := s.mint(c, s.signer())
	if err != nil {
		t.Fatalf("entratest: mint: %v", err)
	}
	return token
}

// MintUnknownKey signs c with a key the JWKS never lists, under a kid of
// its own.
func (s *Server) MintUnknownKey(t testing.TB, c Claims) string {
	t.Helper()
	s.mu.Lock()
	if s.unknown == nil {
		k := newSigningKey(t)
		s.unknown = &k
	}
	k := *s.unknown
	s.mu.Unlock()
	token, err := s.mint(c, k)
	if err != nil {
		t.Fatalf("entratest: mint: %v", err)
	}
	return token
}

// RotateKey publishes a new key and signs with it from now on, as Entra
// rolls its keys; the old ones stay listed.
func (s *Server) RotateKey(t testing.TB) {
	t.Helper()
	k := newSigningKey(t)
	s.mu.Lock()
	s.keys = append(s.keys, k)
	s.mu.Unlock()
}

func (s *Server) signer() signingKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[len(s.keys)-1]
}

func (s *Server) mint(c Claims, key signingKey) (string, error) {
	now := time.Now()
	claims := jwt.MapClaims{
		"iss":   or(c.Issuer, s.Issuer()),
		"aud":   c.Audience,
		"tid":   or(c.TenantID, s.tenant),
		"oid":   or(c.ObjectID, s.objectID(c.ClientID)),
		"sub":   or(c.ObjectID, s.objectID(c.ClientID)),
		"appid": c.ClientID,
		"azp":   c.ClientID,
		"idtyp": "app",
		"ver":   "2.0",
		"iat":   orTime(c.IssuedAt, now).Unix(),
		"nbf":   orTime(c.NotBefore, now).Unix(),
		"exp":   orTime(c.ExpiresAt, now.Add(s.opts.TokenLifetime)).Unix(),
	}
	token := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	token.Header["kid"] = key.kid
	return token.SignedString(key.private)
}

// objectID is the service principal of clientID in this tenant: the same
// GUID on every token.
func (s *Server) objectID(clientID string) string {
	sum := sha256.Sum256([]byte(s.tenant + "/" + clientID))
	return guidText([16]byte(sum[:16]))
}

func or(v, otherwise string) string {
	if v == "" {
		return otherwise
	}
	return v
}

func orTime(v, otherwise time.Time) time.Time {
	if v.IsZero() {
		return otherwise
	}
	return v
}
