package signalrhub

import (
	"net/http"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"github.com/hubprobe/hubprobe/signalr"
)

// startEntraHub serves a hub that takes Entra tokens from a fresh loopback
// tenant, beside tokens signed with wiretest.AccessKey unless host
// disables local auth.
func startEntraHub(t *testing.T, cfg Config, host core.Config) (*Hub, *wiretest.TestServer, *entratest.Server) {
	t.Helper()
	rig := entratest.New(t, entratest.Options{})
	host.EntraIssuer, host.EntraHTTPClient = rig.Issuer(), rig.HTTPClient()
	host.AccessKey = wiretest.AccessKey
	h, srv, _ := startHub(t, cfg, host)
	return h, srv, rig
}

// An Entra token for Azure SignalR Service sends through both REST API
// versions (a later api-version too: the audience names the service) and
// gets a client token that a real client connects with as its user.
func TestEntraTokenOnSignalRRESTAndGenerateToken(t *testing.T) {
	_, srv, rig := startEntraHub(t, Config{}, core.Config{})
	bearer := rig.Token(t, wiretest.EntraApp, core.SignalRResource)
	token := wiretest.GenerateToken(t, srv, "/api/hubs/Chat/:generateToken?api-version=2024-12-01&userId=alice&minutesToExpire=5", bearer)
	claims := wiretest.ClaimsOf(t, token)
	exp, _ := claims.GetExpirationTime()
	if claims["aud"] != srv.Origin()+"/client/?hub=chat" || claims["nameid"] != "alice" || time.Until(exp.Time) > 5*time.Minute {
		t.Fatalf("client token claims %v, want aud %s/client/?hub=chat, nameid alice, 5 minutes", claims, srv.Origin())
	}
	_, toAlice := wiretest.DialProbe(t, signalrclient.Options{URL: srv.Origin() + "/client/?hub=chat", AccessToken: token, Protocol: signalr.JSONProtocol{}})
	msg := func(step string) string {
		return `{"target":"RecordLatency","arguments":[{"step":"` + step + `"}]}`
	}
	for _, send := range []struct{ step, path string }{
		{"v1", "/api/v1/hubs/chat/users/alice"},
		{"2022-06-01", "/api/hubs/chat/users/alice/:send?api-version=2022-06-01"},
		{"2024-12-01", "/api/hubs/chat/:send?api-version=2024-12-01"},
	} {
		if r := wiretest.Request(t, http.MethodPost, srv.Origin()+send.path, bearer, msg(send.step)); r.Status != http.StatusAccepted {
			t.Fatalf("%s: %d %s", send.path, r.Status, r.Body)
		}
		wiretest.ExpectPayloads(t, "alice", toAlice, `{"step":"`+send.step+`"}`)
	}
}
