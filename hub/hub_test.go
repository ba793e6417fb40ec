package hub_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// Tokens that are wrong in one way each are refused with 401, on both
// services' REST APIs; the stream of them costs the issuer no key fetch
// beyond the first.
func TestEntraRefusals(t *testing.T) {
	_, srv, rig := startEntraHub(t, hub.Options{})
	other := entratest.New(t, entratest.Options{})
	for _, svc := range []struct{ resource, path string }{
		{hub.SignalRResource, "/api/v1/hubs/chat"},
		{hub.WebPubSubResource, "/api/hubs/chat/:send?api-version=2024-12-01"},
	} {
		mint := func(c entratest.Claims) string {
			c.ClientID = wiretest.EntraApp
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
			"another tenant's key":   other.Token(t, wiretest.EntraApp, svc.resource),
			"HS256 with Entra kid":   confusedToken(t, rig, svc.resource, jwt.SigningMethodHS256),
			"alg none":               confusedToken(t, rig, svc.resource, jwt.SigningMethodNone),
			"HS256 under access key": confusedToken(t, rig, svc.resource, nil),
		}
		for name, token := range cases {
			if r := wiretest.Request(t, http.MethodPost, srv.Origin()+svc.path, token, `{"target":"x","arguments":[]}`); r.Status != http.StatusUnauthorized {
				t.Errorf("%s, %s: %d %s, want 401", svc.resource, name, r.Status, r.Body)
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
	good := rig.Token(t, wiretest.EntraApp, resource)
	claims := wiretest.ClaimsOf(t, good)
	parsed, _, _ := jwt.NewParser().ParseUnverified(good, jwt.MapClaims{})
	kid := parsed.Header["kid"].(string)
	var key any = []byte(kid)
	switch method {
	case nil:
		method, key = jwt.SigningMethodHS256, []byte(wiretest.AccessKey)
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
	_, srv, rig := startEntraHub(t, hub.Options{DisableLocalAuth: true})
	keyed := wiretest.MustConnectionString(t, "Endpoint="+srv.Origin()+";AccessKey="+wiretest.AccessKey+";Version=1.0;")
	restTok := func(path string) string { return wiretest.RESTToken(t, wiretest.AccessKey, srv.Origin()+path) }
	for _, c := range []struct{ method, path, token string }{
		{http.MethodPost, "/api/v1/hubs/chat", restTok("/api/v1/hubs/chat")},
		{http.MethodPost, "/api/hubs/chat/:generateToken?api-version=2024-12-01", restTok("/api/hubs/chat/:generateToken")},
		{http.MethodPost, "/api/hubs/chat/:send?api-version=2024-12-01", wiretest.RESTToken(t, wiretest.AccessKey, srv.Origin()+"/api/hubs/chat/:send?api-version=2024-12-01")},
		{http.MethodPost, "/client/negotiate?hub=chat&negotiateVersion=1", wiretest.ClientToken(t, keyed, "chat", "")},
	} {
		r := wiretest.Request(t, c.method, srv.Origin()+c.path, c.token, `{"target":"x","arguments":[]}`)
		if r.Status != http.StatusUnauthorized || !strings.Contains(r.Body, hub.LocalAuthDisabledText) {
			t.Errorf("%s with an access-key token: %d %q, want 401 %q", c.path, r.Status, r.Body, hub.LocalAuthDisabledText)
		}
	}
	bearer := rig.Token(t, wiretest.EntraApp, hub.SignalRResource)
	token := wiretest.GenerateToken(t, srv, "/api/hubs/chat/:generateToken?api-version=2024-12-01&userId=carol", bearer)
	_, toCarol := wiretest.DialProbe(t, signalrclient.Options{URL: srv.Origin() + "/client/?hub=chat", AccessToken: token, Protocol: signalr.JSONProtocol{}})
	if r := wiretest.Request(t, http.MethodPost, srv.Origin()+"/api/v1/hubs/chat", bearer, `{"target":"RecordLatency","arguments":[1]}`); r.Status != http.StatusAccepted {
		t.Fatalf("Entra send: %d %s", r.Status, r.Body)
	}
	wiretest.ExpectPayloads(t, "carol", toCarol, "1")
	if cs := srv.ConnectionString(); cs != "Endpoint="+srv.Origin()+";AuthType=azure;Version=1.0;" {
		t.Errorf("ConnectionString() = %q, want the keyless AuthType=azure form", cs)
	}
}

// Without an Entra token, the api-version tells the services apart: a
// token signed with the access key gets a SignalR client token from a
// SignalR version and a Web PubSub one from a Web PubSub version.
func TestGenerateTokenWithTheAccessKey(t *testing.T) {
	_, srv, _ := startAzureHub(t, hub.Options{})
	path := "/api/hubs/chat/:generateToken"
	bearer := wiretest.RESTToken(t, wiretest.AccessKey, srv.Origin()+path)
	signalR := wiretest.ClaimsOf(t, wiretest.GenerateToken(t, srv, path+"?api-version=2022-06-01&userId=dave", bearer))
	if signalR["aud"] != srv.Origin()+"/client/?hub=chat" || signalR["nameid"] != "dave" {
		t.Errorf("SignalR client token %v", signalR)
	}
	exp, _ := signalR.GetExpirationTime()
	if left := time.Until(exp.Time); left < 59*time.Minute || left > time.Hour {
		t.Errorf("default lifetime %s, want an hour", left)
	}
	wpsBearer := wiretest.RESTToken(t, wiretest.AccessKey, srv.Origin()+path+"?api-version=2024-01-01&userId=erin")
	wps := wiretest.ClaimsOf(t, wiretest.GenerateToken(t, srv, path+"?api-version=2024-01-01&userId=erin", wpsBearer))
	if wps["aud"] != srv.Origin()+"/client/hubs/chat" || wps["sub"] != "erin" {
		t.Errorf("Web PubSub client token %v", wps)
	}
}

func TestGenerateTokenRefusesBadParameters(t *testing.T) {
	_, srv, rig := startEntraHub(t, hub.Options{})
	signalR, wps := rig.Token(t, wiretest.EntraApp, hub.SignalRResource), rig.Token(t, wiretest.EntraApp, hub.WebPubSubResource)
	cases := []struct {
		name, query, bearer string
		status              int
	}{
		{"zero minutes", "minutesToExpire=0", signalR, http.StatusBadRequest},
		{"minutes not a number", "minutesToExpire=soon", wps, http.StatusBadRequest},
		{"over a year", "minutesToExpire=525601", signalR, http.StatusBadRequest},
		{"MQTT client", "clientType=MQTT", wps, http.StatusBadRequest},
		{"empty group", "group=", wps, http.StatusBadRequest},
		{"too many roles", strings.Repeat("role=r&", 257), wps, http.StatusBadRequest}, // a token carries 256 at most
		{"no bearer", "userId=x", "", http.StatusUnauthorized},
		{"a year", "minutesToExpire=525600", signalR, http.StatusOK},
	}
	for _, c := range cases {
		url := srv.Origin() + "/api/hubs/chat/:generateToken?api-version=2024-12-01&" + c.query
		if r := wiretest.Request(t, http.MethodPost, url, c.bearer, ""); r.Status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, r.Status, r.Body, c.status)
		}
	}
}

func TestEntraOptions(t *testing.T) {
	for _, o := range []hub.Options{
		{DisableLocalAuth: true, AccessKey: wiretest.AccessKey},
		{EntraIssuer: "http://login.example/tenant/v2.0"},
		{EntraIssuer: "https://login.example/tenant/v2.0", Path: "/api/hub"},
	} {
		if h, err := hub.New(o, nil); err == nil {
			h.Close()
			t.Errorf("hub.New(%+v) accepted", o)
		}
	}
	// An issuer alone turns the emulation on, with the keyless connection string.
	rig := entratest.New(t, entratest.Options{})
	_, srv, _ := startHub(t, hub.Options{EntraIssuer: rig.Issuer(), EntraHTTPClient: rig.HTTPClient()})
	if cs := srv.ConnectionString(); cs != "Endpoint="+srv.Origin()+";AuthType=azure;Version=1.0;" {
		t.Errorf("ConnectionString() = %q, want the keyless form", cs)
	}
	bearer := rig.Token(t, wiretest.EntraApp, hub.SignalRResource)
	if r := wiretest.Request(t, http.MethodPost, srv.Origin()+"/api/v1/hubs/chat", bearer, `{"target":"x","arguments":[]}`); r.Status != http.StatusAccepted {
		t.Errorf("REST send with only an issuer: %d %s", r.Status, r.Body)
	}
}

// The connection quota counts SignalR and Web PubSub connections together.
func TestWebPubSubConnectionQuota(t *testing.T) {
	_, srv, reg := startWPSHub(t, hub.Options{ConnectionQuota: 2})
	wiretest.Connect(t, srv) // a SignalR connection that skipped nothing
	first := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	tok := wiretest.WPSToken(t, wiretest.AccessKey, srv.Origin()+wiretest.ClientPath+"chat", "", nil, nil)
	_, resp, err := wiretest.DialWPS(t, wiretest.ClientURL(srv, "chat"), webpubsub.ProtocolJSON, tok)
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third connection: %v %v, want 429", err, resp)
	}
	if got := metricValue(t, reg, "hubprobe_hub_throttled_total", "reason="+throttle.ConnectionLimit); got != 1 {
		t.Errorf("throttled{connection_limit} = %v, want 1", got)
	}
	first.WS.Close()
	wiretest.WaitFor(t, "the quota to free up", func() bool {
		c, _, err := wiretest.DialWPS(t, wiretest.ClientURL(srv, "chat"), webpubsub.ProtocolJSON, tok)
		if err == nil {
			c.WS.Close()
		}
		return err == nil
	})
}

// The SignalR emulation's REST API shares the /api/hubs/ paths; its
// api-version keeps the two apart.
func TestWebPubSubRESTBesideSignalR(t *testing.T) {
	_, srv, _ := startWPSHub(t, hub.Options{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	signalRSend := webpubsub.Request{Method: http.MethodPost, URL: srv.Origin() + "/api/hubs/chat/:send?api-version=2022-06-01"}
	aud := signalRSend.URL[:strings.IndexByte(signalRSend.URL, '?')]
	if r := wiretest.CallSigned(t, signalRSend, wiretest.AccessKey, aud, "application/json", `{"target":"T","arguments":[]}`); r.Status != http.StatusAccepted {
		t.Fatalf("SignalR send: %d %s", r.Status, r.Body)
	}
	api := wiretest.NewRESTAPI(t, srv, "chat")
	api.Expect(api.API.SendToAll(), "text/plain", "web pubsub", http.StatusAccepted)
	c.ExpectServerMessage("text", `"web pubsub"`) // and not the SignalR invocation
}

func TestEventHandlerOptionChecked(t *testing.T) {
	for _, o := range []hub.Options{
		{WebPubSubEventHandler: "http://127.0.0.1:1/{hub}"},                                       // no access key
		{AccessKey: wiretest.AccessKey, WebPubSubEventHandler: "127.0.0.1:1/{hub}"},               // not absolute
		{AccessKey: wiretest.AccessKey, WebPubSubEventHandler: "ftp://127.0.0.1/{hub}"},           // not http
		{AccessKey: wiretest.AccessKey, WebPubSubEventHandler: "http://127.0.0.1/{hub}/{events}"}, // unknown placeholder
	} {
		if h, err := hub.New(o, nil); err == nil {
			h.Close()
			t.Errorf("hub.New(%q): want an error", o.WebPubSubEventHandler)
		}
	}
}

// One switch, RedirectNegotiate, sends both protocols' clients to the
// emulated service: Core's to /client/, classic's to /aspnetclient.
func TestRedirectNegotiateCoversClassic(t *testing.T) {
	srv := hubtest.Start(t, hub.Options{AccessKey: wiretest.AccessKey, RedirectNegotiate: true})
	r := wiretest.Request(t, http.MethodGet, srv.Origin()+"/signalr/negotiate?clientProtocol=2.1&connectionData=%5B%7B%22name%22%3A%22signalrbench%22%7D%5D", "", "")
	n, err := aspnet.DecodeNegotiate([]byte(r.Body))
	if r.Status != http.StatusOK || err != nil || !strings.HasPrefix(n.RedirectURL, srv.Origin()+"/aspnetclient?asrs_request_id=") || n.AccessToken == "" {
		t.Fatalf("classic negotiate: %d %s %v", r.Status, r.Body, err)
	}
	if r := wiretest.Request(t, http.MethodPost, srv.URL()+"/negotiate?negotiateVersion=1", "", ""); !strings.Contains(r.Body, `"url":"`+srv.Origin()+`/client/?hub=signalrbench"`) {
		t.Fatalf("Core negotiate: %d %s", r.Status, r.Body)
	}
	offer := srv.Origin() + "/aspnetclient/negotiate?clientProtocol=2.1&connectionData=%5B%7B%22name%22%3A%22signalrbench%22%7D%5D"
	if r := wiretest.Request(t, http.MethodGet, offer, n.AccessToken, ""); r.Status != http.StatusOK || !strings.Contains(r.Body, `"Url":"/aspnetclient"`) {
		t.Fatalf("the service's classic negotiate: %d %s", r.Status, r.Body)
	}
	if r := wiretest.Request(t, http.MethodGet, offer, "", ""); r.Status != http.StatusUnauthorized {
		t.Fatalf("the service's classic negotiate without a token: %d %s", r.Status, r.Body)
	}
}
