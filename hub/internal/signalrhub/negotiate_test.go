package signalrhub

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
)

func postNegotiate(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	return resp.StatusCode, m
}

func TestNegotiateVersions(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	transports := []any{
		map[string]any{"transport": "WebSockets", "transferFormats": []any{"Text", "Binary"}},
		map[string]any{"transport": "ServerSentEvents", "transferFormats": []any{"Text"}},
		map[string]any{"transport": "LongPolling", "transferFormats": []any{"Text", "Binary"}},
	}

	status, v1 := postNegotiate(t, srv.URL()+"/negotiate?negotiateVersion=1")
	if status != 200 || v1["negotiateVersion"] != 1.0 || len(v1) != 4 {
		t.Fatalf("v1: %d %v", status, v1)
	}
	id, token := v1["connectionId"].(string), v1["connectionToken"].(string)
	if len(id) != 22 || len(token) != 22 || id == token {
		t.Fatalf("v1 id %q token %q: want two different 22-character ids", id, token)
	}
	if got, _ := json.Marshal(v1["availableTransports"]); string(got) != mustJSON(transports) {
		t.Fatalf("v1 transports = %s", got)
	}

	// A newer client gets version 1; a client without a version gets 0,
	// whose id doubles as the token.
	if _, v := postNegotiate(t, srv.URL()+"/negotiate?negotiateVersion=5"); v["negotiateVersion"] != 1.0 {
		t.Fatalf("v5 → %v", v)
	}
	status, v0 := postNegotiate(t, srv.URL()+"/negotiate")
	if status != 200 || v0["negotiateVersion"] != 0.0 || v0["connectionToken"] != nil || len(v0) != 3 {
		t.Fatalf("v0: %d %v", status, v0)
	}
	c := wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), v0["connectionId"].(string)))
	c.Handshake()
	if m := c.Next(); wiretest.Unquote(t, m.Arguments[0]) != v0["connectionId"] {
		t.Fatalf("v0 OnConnected %s, want %v", m.Arguments[0], v0["connectionId"])
	}

	if status, body := postNegotiate(t, srv.URL()+"/negotiate?negotiateVersion=x"); status != 400 ||
		body["error"] != "The client requested an invalid protocol version." {
		t.Fatalf("bad version: %d %v", status, body)
	}
	resp, err := http.Get(srv.URL() + "/negotiate")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET negotiate = %d, want 405", resp.StatusCode)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func dialStatus(t *testing.T, url string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wiretest.Timeout)
	defer cancel()
	ws, resp, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
	if err == nil {
		ws.Close()
		return http.StatusSwitchingProtocols
	}
	if resp == nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestTransportIDChecks(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	if got := dialStatus(t, wiretest.WSURL(srv.URL(), "unknown")); got != http.StatusNotFound {
		t.Fatalf("unknown id: %d, want 404", got)
	}
	n := wiretest.Negotiate(t, srv.URL())
	first := wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), n.ConnectionToken))
	if got := dialStatus(t, wiretest.WSURL(srv.URL(), n.ConnectionToken)); got != http.StatusConflict {
		t.Fatalf("second socket: %d, want 409", got)
	}
	// The public connection id is not a token.
	if got := dialStatus(t, wiretest.WSURL(srv.URL(), n.ConnectionID)); got != http.StatusNotFound {
		t.Fatalf("connection id as token: %d, want 404", got)
	}
	first.WS.Close()
	wiretest.WaitFor(t, "the token to be released", func() bool { return h.tokens.Len() == 0 })
	if got := dialStatus(t, wiretest.WSURL(srv.URL(), n.ConnectionToken)); got != http.StatusNotFound {
		t.Fatalf("token of an ended connection: %d, want 404", got)
	}

	resp, err := http.Get(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("plain GET: %d, want 400", resp.StatusCode)
	}
	resp, err = http.Get(srv.URL() + "x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("other path: %d, want 404", resp.StatusCode)
	}
}

// The unit half of this test, core's TestTokensExpire, shows the token
// store forgets unused tokens; this half that the heartbeat makes it.
func TestUnusedTokensExpire(t *testing.T) {
	h := newHub(t, Config{}, core.Config{KeepAliveInterval: 20 * time.Millisecond, ClientTimeout: time.Second})
	h.negotiateTTL = time.Second
	_, srv, _ := serve(t, h)
	wiretest.Negotiate(t, srv.URL())
	if h.tokens.Len() != 1 {
		t.Fatal("negotiate stored no token")
	}
	wiretest.WaitFor(t, "the heartbeat to expire the token", func() bool { return h.tokens.Len() == 0 })
}
