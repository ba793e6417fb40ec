package entratest

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hubprobe/hubprobe/azure/oidc"
)

func TestDiscoveryDocumentAndKeys(t *testing.T) {
	s := newTestServer(t, 0)
	var conf openIDConfiguration
	if code := getJSON(t, s, s.Issuer()+"/.well-known/openid-configuration", &conf); code != 200 {
		t.Fatalf("discovery: %d", code)
	}
	base := s.AuthorityHost() + s.Tenant()
	if conf.Issuer != base+"/v2.0" || conf.TokenEndpoint != base+"/oauth2/v2.0/token" ||
		conf.JWKSURI != base+"/discovery/v2.0/keys" || conf.AuthorizationEndpoint != base+"/oauth2/v2.0/authorize" {
		t.Errorf("discovery document %+v", conf)
	}
	keys := jwksKeyIDs(t, s)
	if len(keys) != 2 || keys[0] == keys[1] {
		t.Errorf("JWKS kids %v, want two distinct", keys)
	}
	if got := s.KeyRequests(); got != 1 {
		t.Errorf("KeyRequests = %d, want 1", got)
	}
	var other errorResponse
	if code := getJSON(t, s, s.AuthorityHost()+newGUID()+"/v2.0/.well-known/openid-configuration", &other); code != 400 || other.Codes[0] != 90002 {
		t.Errorf("another tenant's discovery: %d %+v, want 400 AADSTS90002", code, other)
	}
}

func TestRotatedAndUnknownKeys(t *testing.T) {
	s := newTestServer(t, 0)
	before := jwksKeyIDs(t, s)
	unknown := kidOf(t, s.MintUnknownKey(t, Claims{Audience: testResource}))
	for _, k := range before {
		if k == unknown {
			t.Errorf("MintUnknownKey's kid %s is published", unknown)
		}
	}
	s.RotateKey(t)
	after := jwksKeyIDs(t, s)
	rotated := kidOf(t, s.Token(t, testClient, testResource))
	if len(after) != 3 || after[2] != rotated || rotated == before[1] {
		t.Errorf("after rotation kids %v sign with %s; want a third key that signs", after, rotated)
	}
	claims := verify(t, s, s.Mint(t, Claims{Audience: testResource, ExpiresAt: time.Now().Add(time.Minute)}))
	if time.Until(claims.ExpiresAt) > time.Minute {
		t.Errorf("Mint ignored ExpiresAt: %v", claims.ExpiresAt)
	}
}

func jwksKeyIDs(t *testing.T, s *Server) []string {
	t.Helper()
	var set oidc.KeySet
	getJSON(t, s, s.AuthorityHost()+s.Tenant()+"/discovery/v2.0/keys", &set)
	var kids []string
	for _, k := range set.Keys {
		kids = append(kids, k.KeyID)
	}
	return kids
}

func kidOf(t *testing.T, token string) string {
	t.Helper()
	parsed, _, err := jwt.NewParser().ParseUnverified(token, jwt.MapClaims{})
	if err != nil {
		t.Fatal(err)
	}
	kid, _ := parsed.Header["kid"].(string)
	return kid
}
