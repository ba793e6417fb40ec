package aspnethub

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
)

// startAzureRig serves the classic side with the Azure emulation on, its
// app path's negotiate redirecting.
func startAzureRig(t *testing.T) *rig {
	t.Helper()
	return startRig(t, Config{RedirectNegotiate: true}, core.Config{AccessKey: wiretest.AccessKey})
}

// redirect negotiates at the app path with query and returns the redirect.
func (r *rig) redirect(query string) aspnet.Negotiate {
	r.t.Helper()
	body, status := r.do(http.MethodGet, r.base+aspnet.PathNegotiate+"?"+query, nil)
	n, err := aspnet.DecodeNegotiate(body)
	if status != http.StatusOK || err != nil || !n.IsRedirect() {
		r.t.Fatalf("negotiate: %d %s %v", status, body, err)
	}
	return n
}

// followRedirect is the rig as a client that followed n: at the service's
// client path, with its token and its query.
func (r *rig) followRedirect(n aspnet.Negotiate) *rig {
	r.t.Helper()
	u, err := url.Parse(n.RedirectURL)
	if err != nil {
		r.t.Fatal(err)
	}
	follower := *r
	follower.base, follower.token, follower.query = r.origin+u.Path, n.AccessToken, u.Query()
	return &follower
}

func TestRedirectToTheServiceClientPath(t *testing.T) {
	r := startAzureRig(t)
	cd := url.QueryEscape(connectionData)
	n := r.redirect("clientProtocol=2.1&connectionData=" + cd + "&tenant=a%20b&_=1700000000000&user=alice")
	u, _ := url.Parse(n.RedirectURL)
	q := u.Query()
	want := r.origin + "/aspnetclient?tenant=a%20b&_=1700000000000&user=alice&asrs_request_id=" + q.Get(aspnet.AzureQueryRequestID) + "&asrs.op=%2Fsignalr"
	if n.RedirectURL != want || len(q.Get(aspnet.AzureQueryRequestID)) != 22 || n.ProtocolVersion != aspnet.ServerProtocol || !n.TryWebSockets {
		t.Fatalf("redirect %+v, want RedirectUrl %s", n, want)
	}
	claims, err := azure.VerifyToken([]byte(wiretest.AccessKey), n.AccessToken, r.origin+aspnet.AzureClientPath, time.Now())
	if err != nil || claims.UserID != "alice" {
		t.Fatalf("token claims %+v: %v", claims, err)
	}
	if old := r.redirect("clientProtocol=2.0&connectionData=" + cd + "&tenant=a"); old.RedirectURL != r.origin+"/aspnetclient" {
		t.Fatalf("a 2.0 client was sent to %s, want no query", old.RedirectURL)
	}
	if again := r.redirect("clientProtocol=2.1&connectionData=" + cd); strings.Contains(again.RedirectURL, q.Get(aspnet.AzureQueryRequestID)) {
		t.Fatalf("two redirects share a request id: %s", again.RedirectURL)
	}
}

func TestServiceClientPathServesTheRedirectedClient(t *testing.T) {
	r := startAzureRig(t)
	svc := r.followRedirect(r.redirect("clientProtocol=2.1&connectionData=" + url.QueryEscape(connectionData)))
	n := svc.negotiate()
	if n.URL != aspnet.AzureClientPath {
		t.Fatalf("the service's offer says Url %q", n.URL)
	}
	ws := svc.dialWebSocket(n.ConnectionToken)
	echoOverWebSocket(t, ws)
	lp := svc.negotiate()
	if body, status := svc.do(http.MethodPost, svc.url(aspnet.PathConnect, aspnet.LongPolling, lp.ConnectionToken), url.Values{}); status != http.StatusOK || !envelope(t, body).Initialized {
		t.Fatalf("long polling connect: %d %s", status, body)
	}
	m := r.hub.Metrics
	if got := [3]float64{testutil.ToFloat64(m.Received), testutil.ToFloat64(m.Sent), testutil.ToFloat64(m.Connections)}; got != [3]float64{1, 1, 2} {
		t.Fatalf("received, sent, connections = %v, want 1 1 2", got)
	}
}

func TestServiceClientPathRefusesBadTokens(t *testing.T) {
	r := startAzureRig(t)
	svc := r.followRedirect(r.redirect("clientProtocol=2.1&connectionData=" + url.QueryEscape(connectionData)))
	n := svc.negotiate()
	otherKey, _ := azure.MintToken([]byte("another-key"), azure.TokenClaims{Audience: r.origin + aspnet.AzureClientPath, ExpiresAt: time.Now().Add(time.Hour)})
	coreAudience, _ := azure.MintToken([]byte(wiretest.AccessKey), azure.TokenClaims{Audience: r.origin + "/client/?hub=signalrbench", ExpiresAt: time.Now().Add(time.Hour)})
	for name, token := range map[string]string{"none": "", "another key": otherKey, "the Core client audience": coreAudience, "not a token": "a.b.c"} {
		bad := *svc
		bad.token = token
		for _, u := range []string{bad.base + aspnet.PathNegotiate + "?clientProtocol=2.1", bad.url(aspnet.PathStart, aspnet.LongPolling, n.ConnectionToken)} {
			if body, status := bad.do(http.MethodGet, u, nil); status != http.StatusUnauthorized || string(body) != "Unauthorized." {
				t.Errorf("%s: %s gave %d %s", name, u, status, body)
			}
		}
		ws, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(bad.url(aspnet.PathConnect, aspnet.WebSockets, n.ConnectionToken), "http"), nil)
		if err == nil {
			ws.Close()
		}
		if resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: the WebSocket connect gave %v %v", name, resp, err)
		}
	}
	if got := testutil.ToFloat64(r.hub.Metrics.Connections); got != 0 {
		t.Fatalf("connections %v after refused connects", got)
	}
}

func TestServiceClientPathNeedsTheEmulation(t *testing.T) {
	r := startRig(t, Config{}, core.Config{})
	if _, status := r.do(http.MethodGet, r.origin+"/aspnetclient/negotiate?clientProtocol=2.1", nil); status != http.StatusNotFound {
		t.Fatalf("without an access key /aspnetclient gave %d", status)
	}
	if n := r.negotiate(); n.IsRedirect() {
		t.Fatalf("without RedirectNegotiate the app path redirected: %+v", n)
	}
}

func TestProtocolVersions(t *testing.T) {
	for client, want := range map[string]string{"2.1": "2.0", "2.0": "2.0", "1.5": "1.5", "1.5.0": "1.5.0", "01.5": "1.5", "1.0": "1.2", "": "1.2", "x": "1.2", "2": "1.2", "2.0.0.0.0": "1.2", "-2.0": "1.2", "3.0": "2.0"} {
		if got := resolveProtocol(client); got != want {
			t.Errorf("clientProtocol %q answered %q, want %q", client, got, want)
		}
	}
	r := startAzureRig(t)
	for _, q := range []string{"clientProtocol=2.0.0", "clientProtocol=1.5", "clientProtocol=x", ""} {
		if n := r.redirect(q + "&connectionData=" + url.QueryEscape(connectionData)); n.RedirectURL != r.origin+"/aspnetclient" {
			t.Errorf("%s: redirected to %s, want no query", q, n.RedirectURL)
		}
	}
	if n := r.redirect("clientProtocol=2.1.0&connectionData=" + url.QueryEscape(connectionData)); !strings.Contains(n.RedirectURL, "asrs.op=") {
		t.Errorf("clientProtocol 2.1.0 redirected to %s, want the query", n.RedirectURL)
	}
}
