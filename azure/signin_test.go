package azure

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/webpubsub"
)

const (
	signinClient = "11111111-2222-3333-4444-555555555555"
	signinSecret = "entra-s3cr3t-value~0123456789"
)

// bearerRecorder is a service's REST endpoint on loopback that records the
// Authorization of every request and answers :generateToken.
type bearerRecorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string
	reqs []*http.Request
}

func newBearerRecorder(t *testing.T) *bearerRecorder {
	b := &bearerRecorder{}
	b.srv = localtest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.auth = append(b.auth, r.Header.Get("Authorization"))
		b.reqs = append(b.reqs, r)
		b.mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/:generateToken") {
			_ = json.NewEncoder(w).Encode(map[string]string{"token": "client-token-for-" + r.URL.Query().Get("userId")})
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	return b
}

func (b *bearerRecorder) seen() ([]string, []*http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.auth...), append([]*http.Request(nil), b.reqs...)
}

// newSignIn starts a loopback Entra tenant with one application and points
// azidentity's authority at it, as AZURE_AUTHORITY_HOST does in a private
// cloud.
func newSignIn(t *testing.T, o entratest.Options) *entratest.Server {
	if o.Secrets == nil {
		o.Secrets = map[string]string{signinClient: signinSecret}
	}
	tenant := entratest.New(t, o)
	t.Setenv("AZURE_AUTHORITY_HOST", tenant.AuthorityHost())
	return tenant
}

func appString(endpoint, tenantID, secret string) string {
	return "Endpoint=" + endpoint + ";AuthType=azure.app;ClientId=" + signinClient + ";TenantId=" + tenantID + ";ClientSecret=" + secret + ";"
}

func signinREST(t *testing.T, tenant *entratest.Server, cs string) *RESTClient {
	parsed, err := ParseConnectionString(cs)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := parsed.TokenCredential(CredentialOptions{Transport: tenant.HTTPClient()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewRESTClient(parsed, "Chat", RESTOptions{Credential: cred, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// claimsOf decodes a JWT's payload; the hub's tests check signatures.
func claimsOf(t *testing.T, bearer string) map[string]any {
	t.Helper()
	parts := strings.Split(strings.TrimPrefix(bearer, "Bearer "), ".")
	if len(parts) != 3 {
		t.Fatalf("Authorization %q is not a bearer JWT", azureTruncate(bearer, 20))
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

func TestClientSecretSignsRESTCallsForTheServiceScope(t *testing.T) {
	tenant := newSignIn(t, entratest.Options{})
	svc := newBearerRecorder(t)
	c := signinREST(t, tenant, appString(svc.srv.URL, tenant.Tenant(), signinSecret))
	for range 3 {
		if err := c.Broadcast(context.Background(), "Hi", nil); err != nil {
			t.Fatal(err)
		}
	}
	auth, _ := svc.seen()
	if len(auth) != 3 || auth[0] != auth[2] {
		t.Fatalf("requests carried %d Authorization headers, the same token each: %v", len(auth), len(auth) == 3 && auth[0] == auth[2])
	}
	claims := claimsOf(t, auth[0])
	if claims["aud"] != "https://signalr.azure.com" || claims["iss"] != tenant.Issuer() || claims["appid"] != signinClient {
		t.Errorf("token claims aud=%v iss=%v appid=%v", claims["aud"], claims["iss"], claims["appid"])
	}
	if n := tenant.TokenRequests(); n != 1 {
		t.Errorf("Entra ID was asked for %d tokens for 3 calls, want 1 (the credential caches it)", n)
	}
}

func TestTokenIsRefreshedAcrossItsExpiry(t *testing.T) {
	// MSAL treats a token within 5 minutes of its expiry as expired, so
	// one of 5 minutes and 1 second is fresh now and due a second later.
	tenant := newSignIn(t, entratest.Options{TokenLifetime: 5*time.Minute + time.Second})
	svc := newBearerRecorder(t)
	c := signinREST(t, tenant, appString(svc.srv.URL, tenant.Tenant(), signinSecret))
	send := func() {
		if err := c.Broadcast(context.Background(), "Hi", nil); err != nil {
			t.Fatal(err)
		}
	}
	send()
	send()
	time.Sleep(1500 * time.Millisecond)
	send()
	auth, _ := svc.seen()
	if tenant.TokenRequests() != 2 || auth[0] != auth[1] || auth[1] == auth[2] {
		t.Errorf("token requests %d, first two calls share a token %v, third has a new one %v; want 2, true, true",
			tenant.TokenRequests(), auth[0] == auth[1], auth[1] != auth[2])
	}
}

func TestWrongSecretFailsWithTheAADSTSCodeAndLeaksNothing(t *testing.T) {
	tenant := newSignIn(t, entratest.Options{})
	svc := newBearerRecorder(t)
	const wrong = "not-the-s3cr3t-but-close"
	c := signinREST(t, tenant, appString(svc.srv.URL, tenant.Tenant(), wrong))
	err := c.Broadcast(context.Background(), "Hi", nil)
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Code != "AADSTS7000215" {
		t.Fatalf("error %v, want an *AuthError with code AADSTS7000215", err)
	}
	if !strings.HasPrefix(err.Error(), "azure: REST broadcast: azure: Microsoft Entra ID sign-in failed: AADSTS7000215: ") {
		t.Errorf("error text %q", err)
	}
	for _, leak := range []string{wrong, signinSecret, "s3cr3t"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("error %q holds a secret", err)
		}
	}
	if auth, _ := svc.seen(); len(auth) != 0 {
		t.Errorf("the service got %d requests without a token", len(auth))
	}
}

func TestWorkloadIdentitySignsInWithTheTokenFile(t *testing.T) {
	const assertion = "eyJ.federated-assertion-of-the-pod.sig"
	tenant := newSignIn(t, entratest.Options{Federated: map[string]string{signinClient: assertion}})
	t.Setenv("AZURE_CLIENT_ID", signinClient)
	t.Setenv("AZURE_TENANT_ID", tenant.Tenant())
	t.Setenv("AZURE_FEDERATED_TOKEN_FILE", tenant.WriteTokenFile(t, signinClient))
	svc := newBearerRecorder(t)
	c := signinREST(t, tenant, "Endpoint="+svc.srv.URL+";AuthType=azure;")
	if err := c.SendToUser(context.Background(), "u1", "Hi", nil); err != nil {
		t.Fatal(err)
	}
	auth, _ := svc.seen()
	if claims := claimsOf(t, auth[0]); claims["aud"] != "https://signalr.azure.com" || claims["appid"] != signinClient {
		t.Errorf("token claims aud=%v appid=%v", claims["aud"], claims["appid"])
	}
}

func TestClientTokensComeFromGenerateTokenWithAnEntraSignIn(t *testing.T) {
	tenant := newSignIn(t, entratest.Options{})
	svc := newBearerRecorder(t)
	cs := appString(svc.srv.URL, tenant.Tenant(), signinSecret)
	token, err := signinREST(t, tenant, cs).ClientToken(context.Background(), "user-1", 90*time.Second)
	if err != nil || token != "client-token-for-user-1" {
		t.Fatalf("SignalR client token %q, %v", token, err)
	}
	wps := signinWebPubSub(t, tenant, cs)
	token, err = wps.ClientToken(context.Background(), "user-2", []string{WebPubSubRoleSendToGroup}, 0)
	if err != nil || token != "client-token-for-user-2" {
		t.Fatalf("Web PubSub client token %q, %v", token, err)
	}
	auth, reqs := svc.seen()
	wantQueries := []string{
		"api-version=" + SignalRGenerateTokenAPIVersion + "&minutesToExpire=2&userId=user-1",
		"api-version=" + webpubsub.APIVersion + "&minutesToExpire=60&role=webpubsub.sendToGroup&userId=user-2",
	}
	for i, path := range []string{"/api/hubs/chat/:generateToken", "/api/hubs/Chat/:generateToken"} {
		if reqs[i].Method != http.MethodPost || reqs[i].URL.Path != path || reqs[i].URL.RawQuery != wantQueries[i] {
			t.Errorf("request %d: %s %s?%s, want POST %s?%s", i, reqs[i].Method, reqs[i].URL.Path, reqs[i].URL.RawQuery, path, wantQueries[i])
		}
	}
	if aud := claimsOf(t, auth[1])["aud"]; aud != "https://webpubsub.azure.com" {
		t.Errorf("Web PubSub call's token aud %v", aud)
	}
}

func signinWebPubSub(t *testing.T, tenant *entratest.Server, cs string) *WebPubSubRESTClient {
	parsed, err := ParseConnectionString(cs)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := (&Credentials{Options: CredentialOptions{Transport: tenant.HTTPClient()}}).For(parsed)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewWebPubSubRESTClient(parsed, "Chat", RESTOptions{Credential: cred, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
