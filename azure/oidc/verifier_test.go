package oidc_test

import (
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/azure/oidc"
	"github.com/hubprobe/hubprobe/internal/localtest"
)

const (
	resource = "https://signalr.azure.com"
	client   = "0b6a3c44-5d1e-4f6b-9c2a-7e8f9a0b1c2d"
)

func newVerifier(t *testing.T, s *entratest.Server) *oidc.Verifier {
	t.Helper()
	v, err := oidc.NewVerifier(s.Issuer(), s.HTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func verify(t *testing.T, v *oidc.Verifier, token string) (oidc.Claims, error) {
	t.Helper()
	return v.Verify(localtest.Ctx(t, 10*time.Second), token, "https://other.example", resource)
}

func TestVerifyAcceptsTheIssuersTokens(t *testing.T) {
	s := entratest.New(t, entratest.Options{})
	v := newVerifier(t, s)
	claims, err := verify(t, v, s.Token(t, client, resource))
	if err != nil {
		t.Fatal(err)
	}
	if claims.Audience != resource || claims.AppID != client || claims.TenantID != s.Tenant() || claims.ObjectID == "" {
		t.Errorf("claims %+v", claims)
	}
	almostExpired := s.Mint(t, entratest.Claims{ClientID: client, Audience: resource, ExpiresAt: time.Now().Add(-oidc.Leeway / 2)})
	if _, err := verify(t, v, almostExpired); err != nil {
		t.Errorf("a token expired within the leeway: %v", err)
	}
	if got := s.KeyRequests(); got != 1 {
		t.Errorf("KeyRequests = %d, want 1 (keys fetched once, then reused)", got)
	}
}

func TestVerifyRefusals(t *testing.T) {
	s := entratest.New(t, entratest.Options{})
	other := entratest.New(t, entratest.Options{})
	v := newVerifier(t, s)
	now := time.Now()
	cases := []struct {
		name  string
		token string
		want  error
	}{
		{"wrong audience", s.Token(t, client, "https://webpubsub.azure.com"), oidc.ErrAudience},
		{"wrong issuer", s.Mint(t, entratest.Claims{Audience: resource, Issuer: other.Issuer()}), oidc.ErrIssuer},
		{"another tenant's token", other.Token(t, client, resource), oidc.ErrUnknownKey},
		{"expired", s.Mint(t, entratest.Claims{Audience: resource, ExpiresAt: now.Add(-10 * time.Minute)}), oidc.ErrExpired},
		{"not yet valid", s.Mint(t, entratest.Claims{Audience: resource, NotBefore: now.Add(10 * time.Minute)}), oidc.ErrNotYetValid},
		{"unknown kid", s.MintUnknownKey(t, entratest.Claims{Audience: resource}), oidc.ErrUnknownKey},
		{"HS256 keyed with the public key", hmacToken(t, s), oidc.ErrAlgorithm},
		{"alg none", noneToken(t, s), oidc.ErrAlgorithm},
		{"no kid", withoutKid(t, s), oidc.ErrMalformed},
		{"not a JWT", "a.b.c", oidc.ErrMalformed},
	}
	for _, c := range cases {
		if _, err := verify(t, v, c.token); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// claimsOf are a valid token's claims, to sign in another way.
func claimsOf(t *testing.T, s *entratest.Server) (jwt.MapClaims, string) {
	t.Helper()
	claims := jwt.MapClaims{}
	tok, _, err := jwt.NewParser().ParseUnverified(s.Token(t, client, resource), claims)
	if err != nil {
		t.Fatal(err)
	}
	return claims, tok.Header["kid"].(string)
}

// hmacToken is the algorithm-confusion attack: HS256 under the issuer's
// kid, keyed with what a verifier that trusts the header would use.
func hmacToken(t *testing.T, s *entratest.Server) string {
	claims, kid := claimsOf(t, s)
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	tok.Header["kid"] = kid
	signed, err := tok.SignedString([]byte(kid))
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

func noneToken(t *testing.T, s *entratest.Server) string {
	claims, kid := claimsOf(t, s)
	tok := jwt.NewWithClaims(jwt.SigningMethodNone, claims)
	tok.Header["kid"] = kid
	signed, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// withoutKid is an RS256 token with no kid (its signature is made up: the
// kid is checked first).
func withoutKid(t *testing.T, s *entratest.Server) string {
	claims, _ := claimsOf(t, s)
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	signed, err := tok.SigningString()
	if err != nil {
		t.Fatal(err)
	}
	return signed + ".c2ln"
}
