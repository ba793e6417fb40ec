package wpshub

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
)

// startEntraHub serves a hub that takes Entra tokens from a fresh loopback
// tenant, beside tokens signed with wiretest.AccessKey unless host
// disables local auth.
func startEntraHub(t *testing.T, cfg Config, host core.Config) (*Hub, *wiretest.TestServer, *entratest.Server) {
	t.Helper()
	rig := entratest.New(t, entratest.Options{})
	host.EntraIssuer, host.EntraHTTPClient = rig.Issuer(), rig.HTTPClient()
	h, srv, _ := startHub(t, cfg, host)
	return h, srv, rig
}

// An Entra token for Azure Web PubSub gets a client token with the roles
// and groups asked for, for the hub as the path spells it, and sends
// through the REST API.
func TestEntraTokenOnWebPubSubRESTAndGenerateToken(t *testing.T) {
	_, srv, rig := startEntraHub(t, Config{}, core.Config{})
	bearer := rig.Token(t, wiretest.EntraApp, core.WebPubSubResource+"/")
	token := wiretest.GenerateToken(t, srv, "/api/hubs/Chat/:generateToken?api-version=2024-12-01&userId=bob&role=webpubsub.sendToGroup&group=g1&group=g2", bearer)
	claims := wiretest.ClaimsOf(t, token)
	if claims["aud"] != srv.Origin()+"/client/hubs/Chat" || claims["sub"] != "bob" {
		t.Fatalf("client token claims %v", claims)
	}
	c, resp, err := wiretest.DialWPS(t, wiretest.ClientURL(srv, "Chat"), "json.webpubsub.azure.v1", token)
	if err != nil {
		t.Fatalf("dial with the generated token: %v (%v)", err, resp)
	}
	if f := c.Next(); f.UserID != "bob" {
		t.Fatalf("connected frame %+v, want user bob", f)
	}
	send := wiretest.NewHTTPConn(t, srv.Origin()+"/api/hubs/Chat/groups/g2/:send?api-version=2024-12-01", "")
	send.Header.Set("Authorization", "Bearer "+bearer)
	send.Header.Set("Content-Type", "application/json")
	if r := send.Do(http.MethodPost, strings.NewReader(`"hello"`), ""); r.Status != http.StatusAccepted {
		t.Fatalf("group send: %d %s", r.Status, r.Body)
	}
	c.ExpectServerMessage("json", `"hello"`)
}
