package wpshub

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/webpubsub"
)

func TestWebPubSubConnectedMessage(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	plain := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "alice")
	reliable := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSONReliable, "")
	if c := plain.Connected; len(c.ConnectionID) != 22 || c.UserID != "alice" || c.ReconnectionToken != "" {
		t.Errorf("plain connected = %+v, want a 22-character id, user alice, no reconnection token", c)
	}
	if c := reliable.Connected; len(c.ConnectionID) != 22 || c.UserID != "" || len(c.ReconnectionToken) != 22 {
		t.Errorf("reliable connected = %+v, want an id, no user, a reconnection token", c)
	}
	if plain.Connected.ConnectionID == reliable.Connected.ConnectionID {
		t.Error("two connections got the same id")
	}
	if got := testutil.ToFloat64(h.Metrics.Connections); got != 2 {
		t.Errorf("hubprobe_hub_connections = %v, want 2", got)
	}
	plain.WS.Close()
	wiretest.WaitFor(t, "the closed connection to be gone", func() bool { return testutil.ToFloat64(h.Metrics.Connections) == 1 })
}

func TestWebPubSubClientTokens(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	aud := srv.Origin() + wiretest.ClientPath + "chat"
	port := strings.TrimPrefix(srv.Origin(), "http://127.0.0.1")
	cases := []struct {
		name, hub, token string
		status           int
	}{
		{"good token", "chat", wiretest.WPSToken(t, wiretest.AccessKey, aud, "u", nil, nil), http.StatusSwitchingProtocols},
		{"hub name in another case", "Chat", wiretest.WPSToken(t, wiretest.AccessKey, srv.Origin()+wiretest.ClientPath+"Chat", "", nil, nil), http.StatusSwitchingProtocols},
		{"audience without the port", "chat", wiretest.WPSToken(t, wiretest.AccessKey, "http://127.0.0.1"+wiretest.ClientPath+"chat", "", nil, nil), http.StatusSwitchingProtocols},
		{"no token", "chat", "", http.StatusUnauthorized},
		{"token for another hub", "chat", wiretest.WPSToken(t, wiretest.AccessKey, srv.Origin()+wiretest.ClientPath+"other", "", nil, nil), http.StatusUnauthorized},
		{"token signed with another key", "chat", wiretest.WPSToken(t, "another-key", aud, "", nil, nil), http.StatusUnauthorized},
		{"ws scheme in the audience", "chat", wiretest.WPSToken(t, wiretest.AccessKey, "ws://127.0.0.1"+port+wiretest.ClientPath+"chat", "", nil, nil), http.StatusUnauthorized},
		{"SignalR client audience", "chat", wiretest.WPSToken(t, wiretest.AccessKey, srv.Origin()+"/client/?hub=chat", "", nil, nil), http.StatusUnauthorized},
		{"not a token", "chat", "a.b.c", http.StatusUnauthorized},
		{"invalid hub name", "9chat", wiretest.WPSToken(t, wiretest.AccessKey, srv.Origin()+wiretest.ClientPath+"9chat", "", nil, nil), http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, resp, err := wiretest.DialWPS(t, wiretest.ClientURL(srv, tc.hub), webpubsub.ProtocolJSON, tc.token)
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.status)
			}
			if c != nil && c.Next().Kind != webpubsub.KindConnected {
				t.Fatal("want connected first")
			}
		})
	}
}

// The token may come as a bearer header too, as the protocol allows.
func TestWebPubSubTokenInHeader(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	d := websocket.Dialer{Subprotocols: []string{webpubsub.ProtocolJSON}}
	header := http.Header{"Authorization": {"Bearer " + wiretest.WPSToken(t, wiretest.AccessKey, srv.Origin()+wiretest.ClientPath+"chat", "bob", nil, nil)}}
	ws, _, err := d.Dial(wiretest.ClientURL(srv, "chat"), header)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	c := &wiretest.WPSClient{T: t, WS: ws}
	if f := c.Next(); f.Kind != webpubsub.KindConnected || f.UserID != "bob" {
		t.Fatalf("got %+v, want connected as bob", f)
	}
}

func TestWebPubSubClientEndpointRefusals(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	tok := wiretest.WPSToken(t, wiretest.AccessKey, srv.Origin()+wiretest.ClientPath+"chat", "", nil, nil)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, wiretest.ClientPath + "chat?access_token=" + tok, http.StatusBadRequest}, // not an upgrade
		{http.MethodPost, wiretest.ClientPath + "chat", http.StatusMethodNotAllowed},
		{http.MethodGet, wiretest.ClientPath + "chat/extra", http.StatusNotFound},
	} {
		if r := wiretest.Request(t, tc.method, srv.Origin()+tc.path, "", ""); r.Status != tc.status {
			t.Errorf("%s %s = %d %q, want %d", tc.method, tc.path, r.Status, r.Body, tc.status)
		}
	}
}

// A reliable client that lost its socket tries to recover it; the hub keeps
// no dropped connections, so it closes with 1008 (the official client then
// opens a new connection).
func TestWebPubSubRecoveryRefused(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c, resp, err := wiretest.DialWPS(t, wiretest.ClientURL(srv, "chat")+"?awps_connection_id=abc&awps_reconnection_token=def", webpubsub.ProtocolJSONReliable, "")
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	c.ExpectClose(websocket.ClosePolicyViolation)
}

func TestWebPubSubPingPong(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	c.Send(`{"type":"ping"}`)
	if got := c.NextRaw(); got != `{"type":"pong"}` {
		t.Fatalf("got %s, want a pong", got)
	}
}

func TestWebPubSubHubCloseSaysShuttingDown(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	go h.Close()
	c.ExpectDisconnected("The hub is shutting down.", websocket.CloseGoingAway)
}

// Web PubSub frames count into the hub's message counters like SignalR
// messages: every client frame received, every frame written.
func TestWebPubSubMessageCounters(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...) // sent: connected
	c.Send(`{"type":"ping"}`)                                                         // sent: pong
	c.NextRaw()
	c.Send(`{"type":"joinGroup","group":"g","ackId":1}`) // sent: ack
	c.ExpectAck(1, "")
	c.Send(`{"type":"sendToGroup","group":"g","ackId":2,"data":1}`) // sent: message, ack
	c.Next()
	c.ExpectAck(2, "")
	if got := testutil.ToFloat64(h.Metrics.Received); got != 3 {
		t.Errorf("hubprobe_hub_messages_received_total = %v, want 3", got)
	}
	// The writer counts a frame once written, which may be just after the
	// client read it.
	wiretest.WaitFor(t, "5 frames counted as sent", func() bool { return testutil.ToFloat64(h.Metrics.Sent) == 5 })
}
