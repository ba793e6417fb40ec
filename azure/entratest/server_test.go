package entratest

import (
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/golang-jwt/jwt/v5"

	"github.com/hubprobe/hubprobe/internal/testlocal"
)

const (
	testClient    = "0b6a3c44-5d1e-4f6b-9c2a-7e8f9a0b1c2d"
	testSecret    = "s3cret~value.that-never-shows"
	testFedClient = "7f1e2d3c-4b5a-4697-8877-665544332211"
	testAssertion = "eyJhbGciOiJSUzI1NiJ9.workload-identity-assertion.sig"
	testResource  = "https://signalr.azure.com"
)

func newTestServer(t *testing.T, lifetime time.Duration) *Server {
	return New(t, Options{
		Secrets:       map[string]string{testClient: testSecret},
		Federated:     map[string]string{testFedClient: testAssertion},
		TokenLifetime: lifetime,
	})
}

// clientOptions aim azcore at s the way the hubprobe daemon is aimed at a
// sovereign or private cloud.
func clientOptions(s *Server) azcore.ClientOptions {
	return azcore.ClientOptions{
		Cloud:     cloud.Configuration{ActiveDirectoryAuthorityHost: s.AuthorityHost()},
		Transport: s.HTTPClient(),
	}
}

func secretCredential(t *testing.T, s *Server, clientID, secret string) azcore.TokenCredential {
	t.Helper()
	cred, err := azidentity.NewClientSecretCredential(s.Tenant(), clientID, secret,
		&azidentity.ClientSecretCredentialOptions{ClientOptions: clientOptions(s), DisableInstanceDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

func workloadCredential(t *testing.T, s *Server, clientID, tokenFile string) azcore.TokenCredential {
	t.Helper()
	cred, err := azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{
		ClientOptions: clientOptions(s), DisableInstanceDiscovery: true,
		ClientID: clientID, TenantID: s.Tenant(), TokenFilePath: tokenFile,
	})
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

func getToken(t *testing.T, cred azcore.TokenCredential) (azcore.AccessToken, error) {
	t.Helper()
	return cred.GetToken(testlocal.Ctx(t, 10*time.Second), policy.TokenRequestOptions{Scopes: []string{testResource + "/.default"}})
}

// verify checks token the way a resource does: the discovery document's
// jwks_uri, the key named by kid, RS256, iss and aud. It returns the
// claims and the index in the JWKS of the key that signed.
func verify(t *testing.T, s *Server, token string) (jwt.MapClaims, int) {
	t.Helper()
	var conf openIDConfiguration
	getJSON(t, s, s.Issuer()+"/.well-known/openid-configuration", &conf)
	var set struct{ Keys []jsonWebKey }
	getJSON(t, s, conf.JWKSURI, &set)
	used := -1
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(tok *jwt.Token) (any, error) {
		for i, k := range set.Keys {
			if k.KeyID == tok.Header["kid"] {
				used = i
				return publicKey(t, k), nil
			}
		}
		return nil, jwt.ErrTokenUnverifiable
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(conf.Issuer), jwt.WithAudience(testResource), jwt.WithExpirationRequired())
	if err != nil {
		t.Fatalf("token does not verify against the JWKS: %v", err)
	}
	return claims, used
}

func publicKey(t *testing.T, k jsonWebKey) *rsa.PublicKey {
	t.Helper()
	n, errN := base64.RawURLEncoding.DecodeString(k.N)
	e, errE := base64.RawURLEncoding.DecodeString(k.E)
	if errN != nil || errE != nil || k.KeyType != "RSA" || k.Use != "sig" {
		t.Fatalf("bad JWK %+v", k)
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
}

func getJSON(t *testing.T, s *Server, url string, v any) int {
	t.Helper()
	resp, err := s.HTTPClient().Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode
}

func TestClientSecretCredentialSignsIn(t *testing.T) {
	s := newTestServer(t, 30*time.Minute)
	cred := secretCredential(t, s, testClient, testSecret)
	tok, err := getToken(t, cred)
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(tok.ExpiresOn); left < 29*time.Minute || left > 31*time.Minute {
		t.Errorf("token expires in %s, want the 30m lifetime", left)
	}
	claims, key := verify(t, s, tok.Token)
	if key != 1 {
		t.Errorf("signed with JWKS key %d, want the second (1)", key)
	}
	for name, want := range map[string]string{"appid": testClient, "azp": testClient, "tid": s.Tenant(), "iss": s.Issuer(), "aud": testResource} {
		if claims[name] != want {
			t.Errorf("claim %s = %v, want %q", name, claims[name], want)
		}
	}
	if _, err := getToken(t, cred); err != nil {
		t.Fatal(err)
	}
	if got := s.TokenRequests(); got != 1 {
		t.Errorf("TokenRequests = %d, want 1 (the second GetToken is served from the credential's cache)", got)
	}
}

func TestWorkloadIdentityCredentialSignsIn(t *testing.T) {
	s := newTestServer(t, 0)
	tok, err := getToken(t, workloadCredential(t, s, testFedClient, s.WriteTokenFile(t, testFedClient)))
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(tok.ExpiresOn); left < 59*time.Minute || left > 61*time.Minute {
		t.Errorf("token expires in %s, want the default hour", left)
	}
	claims, _ := verify(t, s, tok.Token)
	if claims["appid"] != testFedClient || claims["oid"] != claims["sub"] || claims["oid"] == "" {
		t.Errorf("claims %v: want appid %s and oid = sub", claims, testFedClient)
	}
	if got := s.TokenRequests(); got != 1 {
		t.Errorf("TokenRequests = %d, want 1", got)
	}
}
