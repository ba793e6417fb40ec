package hub

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/webpubsub"
)

func TestWebPubSubConnectedMessage(t *testing.T) {
	h, srv, _ := startWPSHub(t, Options{})
	plain := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "alice")
	reliable := connectWPS(t, srv, "chat", webpubsub.ProtocolJSONReliable, "")
	if c := plain.connected; len(c.ConnectionID) != 22 || c.UserID != "alice" || c.ReconnectionToken != "" {
		t.Errorf("plain connected = %+v, want a 22-character id, user alice, no reconnection token", c)
	}
	if c := reliable.connected; len(c.ConnectionID) != 22 || c.UserID != "" || len(c.ReconnectionToken) != 22 {
		t.Errorf("reliable connected = %+v, want an id, no user, a reconnection token", c)
	}
	if plain.connected.ConnectionID == reliable.connected.ConnectionID {
		t.Error("two connections got the same id")
	}
	if got := testutil.ToFloat64(h.metrics.connections); got != 2 {
		t.Errorf("hubprobe_hub_connections = %v, want 2", got)
	}
	plain.ws.Close()
	waitFor(t, "the closed connection to be gone", func() bool { return testutil.ToFloat64(h.metrics.connections) == 1 })
}

func TestWebPubSubClientTokens(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	aud := srv.Origin() + wpsHubPrefix + "chat"
	port := strings.TrimPrefix(srv.Origin(), "http://127.0.0.1")
	cases := []struct {
		name, hub, token string
		status           int
	}{
		{"good token", "chat", wpsToken(t, testAccessKey, aud, "u", nil, nil), http.StatusSwitchingProtocols},
		{"hub name in another case", "Chat", wpsToken(t, testAccessKey, srv.Origin()+wpsHubPrefix+"Chat", "", nil, nil), http.StatusSwitchingProtocols},
		{"audience without the port", "chat", wpsToken(t, testAccessKey, "http://127.0.0.1"+wpsHubPrefix+"chat", "", nil, nil), http.StatusSwitchingProtocols},
		{"no token", "chat", "", http.StatusUnauthorized},
		{"token for another hub", "chat", wpsToken(t, testAccessKey, srv.Origin()+wpsHubPrefix+"other", "", nil, nil), http.StatusUnauthorized},
		{"token signed with another key", "chat", wpsToken(t, "another-key", aud, "", nil, nil), http.StatusUnauthorized},
		{"ws scheme in the audience", "chat", wpsToken(t, testAccessKey, "ws://127.0.0.1"+port+wpsHubPrefix+"chat", "", nil, nil), http.StatusUnauthorized},
		{"SignalR client audience", "chat", wpsToken(t, testAccessKey, srv.Origin()+"/client/?hub=chat", "", nil, nil), http.StatusUnauthorized},
		{"not a token", "chat", "a.b.c", http.StatusUnauthorized},
		{"invalid hub name", "9chat", wpsToken(t, testAccessKey, srv.Origin()+wpsHubPrefix+"9chat", "", nil, nil), http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, resp, err := dialWPS(t, clientURL(srv, tc.hub), webpubsub.ProtocolJSON, tc.token)
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.status)
			}
			if c != nil && c.next().Kind != webpubsub.KindConnected {
				t.Fatal("want connected first")
			}
		})
	}
}

// The token may come as a bearer header too, as the protocol allows.
func TestWebPubSubTokenInHeader(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	d := websocket.Dialer{Subprotocols: []string{webpubsub.ProtocolJSON}}
	header := http.Header{"Authorization": {"Bearer " + wpsToken(t, testAccessKey, srv.Origin()+wpsHubPrefix+"chat", "bob", nil, nil)}}
	ws, _, err := d.Dial(clientURL(srv, "chat"), header)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	c := &wpsClient{t: t, ws: ws}
	if f := c.next(); f.Kind != webpubsub.KindConnected || f.UserID != "bob" {
		t.Fatalf("got %+v, want connected as bob", f)
	}
}

func TestWebPubSubClientEndpointRefusals(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	tok := wpsToken(t, testAccessKey, srv.Origin()+wpsHubPrefix+"chat", "", nil, nil)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, wpsHubPrefix + "chat?access_token=" + tok, http.StatusBadRequest}, // not an upgrade
		{http.MethodPost, wpsHubPrefix + "chat", http.StatusMethodNotAllowed},
		{http.MethodGet, wpsHubPrefix + "chat/extra", http.StatusNotFound},
	} {
		if r := request(t, tc.method, srv.Origin()+tc.path, "", ""); r.status != tc.status {
			t.Errorf("%s %s = %d %q, want %d", tc.method, tc.path, r.status, r.body, tc.status)
		}
	}
}

// A reliable client that lost its socket tries to recover it; the hub keeps
// no dropped connections, so it closes with 1008 (the official client then
// opens a new connection).
func TestWebPubSubRecoveryRefused(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	c, resp, err := dialWPS(t, clientURL(srv, "chat")+"?awps_connection_id=abc&awps_reconnection_token=def", webpubsub.ProtocolJSONReliable, "")
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	c.expectClose(websocket.ClosePolicyViolation)
}

func TestWebPubSubPingPong(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	c.send(`{"type":"ping"}`)
	if got := c.nextRaw(); got != `{"type":"pong"}` {
		t.Fatalf("got %s, want a pong", got)
	}
}

func TestWebPubSubHubCloseSaysShuttingDown(t *testing.T) {
	h, srv, _ := startWPSHub(t, Options{})
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	go h.Close()
	c.expectDisconnected("The hub is shutting down.", websocket.CloseGoingAway)
}

// Web PubSub frames count into the hub's message counters like SignalR
// messages: every client frame received, every frame written.
func TestWebPubSubMessageCounters(t *testing.T) {
	h, srv, _ := startWPSHub(t, Options{})
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...) // sent: connected
	c.send(`{"type":"ping"}`)                                                // sent: pong
	c.nextRaw()
	c.send(`{"type":"joinGroup","group":"g","ackId":1}`) // sent: ack
	c.expectAck(1, "")
	c.send(`{"type":"sendToGroup","group":"g","ackId":2,"data":1}`) // sent: message, ack
	c.next()
	c.expectAck(2, "")
	if got := testutil.ToFloat64(h.metrics.received); got != 3 {
		t.Errorf("hubprobe_hub_messages_received_total = %v, want 3", got)
	}
	// The writer counts a frame once written, which may be just after the
	// client read it.
	waitFor(t, "5 frames counted as sent", func() bool { return testutil.ToFloat64(h.metrics.sent) == 5 })
}
