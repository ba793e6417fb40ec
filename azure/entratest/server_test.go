package entratest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/golang-jwt/jwt/v5"

	"github.com/hubprobe/hubprobe/azure/oidc"
	"github.com/hubprobe/hubprobe/internal/localtest"
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
	return cred.GetToken(localtest.Ctx(t, 10*time.Second), policy.TokenRequestOptions{Scopes: []string{testResource + "/.default"}})
}

// verify checks token the way a resource does, with the hub's verifier:
// the discovery document's jwks_uri, the key named by kid, RS256, iss and
// aud.
func verify(t *testing.T, s *Server, token string) oidc.Claims {
	t.Helper()
	v, err := oidc.NewVerifier(s.Issuer(), s.HTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	claims, err := v.Verify(localtest.Ctx(t, 10*time.Second), token, testResource)
	if err != nil {
		t.Fatalf("token does not verify against the JWKS: %v", err)
	}
	return claims
}

// unverified are a token's claims as they are written.
func unverified(t *testing.T, token string) jwt.MapClaims {
	t.Helper()
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		t.Fatal(err)
	}
	return claims
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
	claims := verify(t, s, tok.Token)
	if claims.AppID != testClient || claims.TenantID != s.Tenant() || claims.Audience != testResource {
		t.Errorf("verified claims %+v, want app %s in tenant %s for %s", claims, testClient, s.Tenant(), testResource)
	}
	if kids := jwksKeyIDs(t, s); kidOf(t, tok.Token) != kids[1] {
		t.Errorf("signed with kid %s, want the second of %v", kidOf(t, tok.Token), kids)
	}
	written := unverified(t, tok.Token)
	for name, want := range map[string]string{"appid": testClient, "azp": testClient, "iss": s.Issuer(), "ver": "2.0"} {
		if written[name] != want {
			t.Errorf("claim %s = %v, want %q", name, written[name], want)
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
	claims := verify(t, s, tok.Token)
	if claims.AppID != testFedClient || claims.ObjectID != claims.Subject || claims.ObjectID == "" {
		t.Errorf("claims %+v: want app %s and oid = sub", claims, testFedClient)
	}
	if got := s.TokenRequests(); got != 1 {
		t.Errorf("TokenRequests = %d, want 1", got)
	}
}
