package hub

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/azure/entratest"
)

// Without an Entra token, the api-version tells the services apart: a
// token signed with the access key gets a SignalR client token from a
// SignalR version and a Web PubSub one from a Web PubSub version.
func TestGenerateTokenWithTheAccessKey(t *testing.T) {
	_, srv, cs := startAzureHub(t, Options{})
	path := "/api/hubs/chat/:generateToken"
	bearer, err := azure.RESTToken(cs, srv.Origin()+path, 0)
	if err != nil {
		t.Fatal(err)
	}
	signalR := claimsOf(t, generateToken(t, srv, path+"?api-version=2022-06-01&userId=dave", bearer))
	if signalR["aud"] != srv.Origin()+"/client/?hub=chat" || signalR["nameid"] != "dave" {
		t.Errorf("SignalR client token %v", signalR)
	}
	exp, _ := signalR.GetExpirationTime()
	if left := time.Until(exp.Time); left < 59*time.Minute || left > time.Hour {
		t.Errorf("default lifetime %s, want an hour", left)
	}
	wpsBearer := restToken(t, testAccessKey, srv.Origin()+path+"?api-version=2024-01-01&userId=erin")
	wps := claimsOf(t, generateToken(t, srv, path+"?api-version=2024-01-01&userId=erin", wpsBearer))
	if wps["aud"] != srv.Origin()+"/client/hubs/chat" || wps["sub"] != "erin" {
		t.Errorf("Web PubSub client token %v", wps)
	}
}

func TestGenerateTokenRefusesBadParameters(t *testing.T) {
	_, srv, rig := startEntraHub(t, Options{})
	signalR, wps := rig.Token(t, entraApp, SignalRResource), rig.Token(t, entraApp, WebPubSubResource)
	cases := []struct {
		name, query, bearer string
		status              int
	}{
		{"zero minutes", "minutesToExpire=0", signalR, http.StatusBadRequest},
		{"minutes not a number", "minutesToExpire=soon", wps, http.StatusBadRequest},
		{"over a year", "minutesToExpire=525601", signalR, http.StatusBadRequest},
		{"MQTT client", "clientType=MQTT", wps, http.StatusBadRequest},
		{"empty group", "group=", wps, http.StatusBadRequest},
		{"too many roles", strings.Repeat("role=r&", maxTokenRoles+1), wps, http.StatusBadRequest},
		{"no bearer", "userId=x", "", http.StatusUnauthorized},
		{"a year", "minutesToExpire=525600", signalR, http.StatusOK},
	}
	for _, c := range cases {
		url := srv.Origin() + "/api/hubs/chat/:generateToken?api-version=2024-12-01&" + c.query
		if r := request(t, http.MethodPost, url, c.bearer, ""); r.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, r.status, r.body, c.status)
		}
	}
}

func TestEntraOptions(t *testing.T) {
	for _, o := range []Options{
		{DisableLocalAuth: true, AccessKey: testAccessKey},
		{EntraIssuer: "http://login.example/tenant/v2.0"},
		{EntraIssuer: "https://login.example/tenant/v2.0", Path: "/api/hub"},
	} {
		if h, err := New(o, nil); err == nil {
			h.Close()
			t.Errorf("New(%+v) accepted", o)
		}
	}
	// An issuer alone turns the emulation on, with the keyless connection string.
	rig := entratest.New(t, entratest.Options{})
	_, srv, _ := startHub(t, Options{EntraIssuer: rig.Issuer(), EntraHTTPClient: rig.HTTPClient()})
	if cs := srv.ConnectionString(); cs != "Endpoint="+srv.Origin()+";AuthType=azure;Version=1.0;" {
		t.Errorf("ConnectionString() = %q, want the keyless form", cs)
	}
	bearer := rig.Token(t, entraApp, SignalRResource)
	if r := request(t, http.MethodPost, srv.Origin()+"/api/v1/hubs/chat", bearer, `{"target":"x","arguments":[]}`); r.status != http.StatusAccepted {
		t.Errorf("REST send with only an issuer: %d %s", r.status, r.body)
	}
}
