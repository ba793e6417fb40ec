package hub

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/probe"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/hubprobe/hubprobe/webpubsub"
)

const entraApp = "5a1c0e2d-7b3f-4e8a-9d6c-0f1e2d3c4b5a"

// startEntraHub serves a hub that takes Entra tokens from a fresh loopback
// tenant, beside tokens signed with testAccessKey unless opts disables
// local auth.
func startEntraHub(t *testing.T, opts Options) (*Hub, *Server, *entratest.Server) {
	t.Helper()
	rig := entratest.New(t, entratest.Options{})
	opts.EntraIssuer, opts.EntraHTTPClient = rig.Issuer(), rig.HTTPClient()
	opts.AccessKey = testAccessKey
	h, srv, _ := startHub(t, opts)
	return h, srv, rig
}

// generateToken calls :generateToken and returns the token it answered.
func generateToken(t *testing.T, srv *Server, path, bearer string) string {
	t.Helper()
	r := request(t, http.MethodPost, srv.Origin()+path, bearer, "")
	var body struct{ Token string }
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.body), &body) != nil || body.Token == "" {
		t.Fatalf("POST %s: %d %s, want 200 {\"token\"}", path, r.status, r.body)
	}
	return body.Token
}

func claimsOf(t *testing.T, token string) jwt.MapClaims {
	t.Helper()
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// An Entra token for Azure SignalR Service sends through both REST API
// versions (a later api-version too: the audience names the service) and
// gets a client token that a real client connects with as its user.
func TestEntraTokenOnSignalRRESTAndGenerateToken(t *testing.T) {
	_, srv, rig := startEntraHub(t, Options{})
	bearer := rig.Token(t, entraApp, SignalRResource)
	token := generateToken(t, srv, "/api/hubs/Chat/:generateToken?api-version=2024-12-01&userId=alice&minutesToExpire=5", bearer)
	claims := claimsOf(t, token)
	exp, _ := claims.GetExpirationTime()
	if claims["aud"] != srv.Origin()+"/client/?hub=chat" || claims["nameid"] != "alice" || time.Until(exp.Time) > 5*time.Minute {
		t.Fatalf("client token claims %v, want aud %s/client/?hub=chat, nameid alice, 5 minutes", claims, srv.Origin())
	}
	_, toAlice := dialProbe(t, probe.Options{URL: srv.Origin() + "/client/?hub=chat", AccessToken: token, Protocol: signalr.JSONProtocol{}})
	msg := func(step string) string {
		return `{"target":"RecordLatency","arguments":[{"step":"` + step + `"}]}`
	}
	for _, send := range []struct{ step, path string }{
		{"v1", "/api/v1/hubs/chat/users/alice"},
		{"2022-06-01", "/api/hubs/chat/users/alice/:send?api-version=2022-06-01"},
		{"2024-12-01", "/api/hubs/chat/:send?api-version=2024-12-01"},
	} {
		if r := request(t, http.MethodPost, srv.Origin()+send.path, bearer, msg(send.step)); r.status != http.StatusAccepted {
			t.Fatalf("%s: %d %s", send.path, r.status, r.body)
		}
		expectPayloads(t, "alice", toAlice, `{"step":"`+send.step+`"}`)
	}
}

// An Entra token for Azure Web PubSub gets a client token with the roles
// and groups asked for, for the hub as the path spells it, and sends
// through the REST API.
func TestEntraTokenOnWebPubSubRESTAndGenerateToken(t *testing.T) {
	_, srv, rig := startEntraHub(t, Options{})
	bearer := rig.Token(t, entraApp, WebPubSubResource+"/")
	token := generateToken(t, srv, "/api/hubs/Chat/:generateToken?api-version=2024-12-01&userId=bob&role=webpubsub.sendToGroup&group=g1&group=g2", bearer)
	claims := claimsOf(t, token)
	if claims["aud"] != srv.Origin()+"/client/hubs/Chat" || claims["sub"] != "bob" {
		t.Fatalf("client token claims %v", claims)
	}
	c, resp, err := dialWPS(t, clientURL(srv, "Chat"), "json.webpubsub.azure.v1", token)
	if err != nil {
		t.Fatalf("dial with the generated token: %v (%v)", err, resp)
	}
	if f := c.next(); f.UserID != "bob" {
		t.Fatalf("connected frame %+v, want user bob", f)
	}
	send := newHTTPConn(t, srv.Origin()+"/api/hubs/Chat/groups/g2/:send?api-version=2024-12-01", "")
	send.header.Set("Authorization", "Bearer "+bearer)
	send.header.Set("Content-Type", "application/json")
	if r := send.do(http.MethodPost, strings.NewReader(`"hello"`), ""); r.status != http.StatusAccepted {
		t.Fatalf("group send: %d %s", r.status, r.body)
	}
	c.expectServerMessage("json", `"hello"`)
}

// Tokens that are wrong in one way each are refused with 401, on both
// services' REST APIs; the stream of them costs the issuer no key fetch
// beyond the first.
func TestEntraRefusals(t *testing.T) {
	_, srv, rig := startEntraHub(t, Options{})
	other := entratest.New(t, entratest.Options{})
	for _, svc := range []struct{ resource, path string }{
		{SignalRResource, "/api/v1/hubs/chat"},
		{WebPubSubResource, "/api/hubs/chat/:send?api-version=2024-12-01"},
	} {
		mint := func(c entratest.Claims) string {
			c.ClientID = entraApp
			if c.Audience == "" {
				c.Audience = svc.resource
			}
			return rig.Mint(t, c)
		}
		cases := map[string]string{
			"wrong audience":         mint(entratest.Claims{Audience: "https://management.azure.com"}),
			"wrong issuer":           mint(entratest.Claims{Issuer: other.Issuer()}),
			"expired":                mint(entratest.Claims{ExpiresAt: time.Now().Add(-10 * time.Minute)}),
			"not valid yet":          mint(entratest.Claims{NotBefore: time.Now().Add(10 * time.Minute)}),
			"unknown kid":            rig.MintUnknownKey(t, entratest.Claims{Audience: svc.resource}),
			"another tenant's key":   other.Token(t, entraApp, svc.resource),
			"HS256 with Entra kid":   confusedToken(t, rig, svc.resource, jwt.SigningMethodHS256),
			"alg none":               confusedToken(t, rig, svc.resource, jwt.SigningMethodNone),
			"HS256 under access key": confusedToken(t, rig, svc.resource, nil),
		}
		for name, token := range cases {
			if r := request(t, http.MethodPost, srv.Origin()+svc.path, token, `{"target":"x","arguments":[]}`); r.status != http.StatusUnauthorized {
				t.Errorf("%s, %s: %d %s, want 401", svc.resource, name, r.status, r.body)
			}
		}
	}
	if got := rig.KeyRequests(); got != 1 {
		t.Errorf("the issuer's keys were fetched %d times, want 1", got)
	}
}

// confusedToken carries the claims of a good Entra token and the kid of
// the tenant's key, signed another way: HS256 keyed with the kid (what a
// verifier that trusts the header might use), alg none, or (method nil)
// HS256 keyed with the hub's access key.
func confusedToken(t *testing.T, rig *entratest.Server, resource string, method jwt.SigningMethod) string {
	t.Helper()
	good := rig.Token(t, entraApp, resource)
	claims := claimsOf(t, good)
	parsed, _, _ := jwt.NewParser().ParseUnverified(good, jwt.MapClaims{})
	kid := parsed.Header["kid"].(string)
	var key any = []byte(kid)
	switch method {
	case nil:
		method, key = jwt.SigningMethodHS256, []byte(testAccessKey)
	case jwt.SigningMethodNone:
		key = jwt.UnsafeAllowNoneSignatureType
	}
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = kid
	signed, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// With local auth disabled every token signed with the access key is
// refused with the service's wording, on the REST APIs, :generateToken and
// the client endpoints, while Entra tokens, and the client tokens the hub
// issues, still work.
func TestDisableLocalAuth(t *testing.T) {
	_, srv, rig := startEntraHub(t, Options{DisableLocalAuth: true})
	keyed := mustConnectionString(t, "Endpoint="+srv.Origin()+";AccessKey="+testAccessKey+";Version=1.0;")
	restTok := func(path string) string {
		tok, err := azure.RESTToken(keyed, srv.Origin()+path, 0)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	for _, c := range []struct{ method, path, token string }{
		{http.MethodPost, "/api/v1/hubs/chat", restTok("/api/v1/hubs/chat")},
		{http.MethodPost, "/api/hubs/chat/:generateToken?api-version=2024-12-01", restTok("/api/hubs/chat/:generateToken")},
		{http.MethodPost, "/api/hubs/chat/:send?api-version=2024-12-01", restToken(t, testAccessKey, srv.Origin()+"/api/hubs/chat/:send?api-version=2024-12-01")},
		{http.MethodPost, "/client/negotiate?hub=chat&negotiateVersion=1", clientToken(t, keyed, "chat", "")},
	} {
		r := request(t, c.method, srv.Origin()+c.path, c.token, `{"target":"x","arguments":[]}`)
		if r.status != http.StatusUnauthorized || !strings.Contains(r.body, LocalAuthDisabledText) {
			t.Errorf("%s with an access-key token: %d %q, want 401 %q", c.path, r.status, r.body, LocalAuthDisabledText)
		}
	}
	bearer := rig.Token(t, entraApp, SignalRResource)
	token := generateToken(t, srv, "/api/hubs/chat/:generateToken?api-version=2024-12-01&userId=carol", bearer)
	_, toCarol := dialProbe(t, probe.Options{URL: srv.Origin() + "/client/?hub=chat", AccessToken: token, Protocol: signalr.JSONProtocol{}})
	if r := request(t, http.MethodPost, srv.Origin()+"/api/v1/hubs/chat", bearer, `{"target":"RecordLatency","arguments":[1]}`); r.status != http.StatusAccepted {
		t.Fatalf("Entra send: %d %s", r.status, r.body)
	}
	expectPayloads(t, "carol", toCarol, "1")
	if cs := srv.ConnectionString(); cs != "Endpoint="+srv.Origin()+";AuthType=azure;Version=1.0;" {
		t.Errorf("ConnectionString() = %q, want the keyless AuthType=azure form", cs)
	}
}

// With local auth disabled the hub sends user events without
// ce-signature, as the service does: there is no access key to sign with.
func TestDisableLocalAuthSendsUnsignedEvents(t *testing.T) {
	e := startEventHandler(t)
	_, srv, rig := startEntraHub(t, Options{DisableLocalAuth: true, WebPubSubEventHandler: e.template()})
	bearer := rig.Token(t, entraApp, WebPubSubResource)
	token := generateToken(t, srv, "/api/hubs/chat/:generateToken?api-version=2024-12-01&userId=frank", bearer)
	c, resp, err := dialWPS(t, clientURL(srv, "chat"), webpubsub.ProtocolJSON, token)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	c.next() // connected
	c.send(`{"type":"event","event":"echo","dataType":"text","data":"ping"}`)
	c.expectServerMessage("text", `"ping"`)
	if _, events := e.counts(); events != 1 {
		t.Fatalf("handler saw %d events, want 1", events)
	}
	if sig := e.events[0].Header.Values(webpubsub.HeaderSignature); len(sig) != 0 {
		t.Errorf("ce-signature %q sent with local auth disabled", sig)
	}
}
