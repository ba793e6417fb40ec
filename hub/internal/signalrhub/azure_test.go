package signalrhub

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/hubprobe/hubprobe/throttle"
)

// startAzureHub serves the hub with the access key, so with the Azure
// emulation.
func startAzureHub(t *testing.T, cfg Config, host core.Config) (*Hub, *wiretest.TestServer, azure.ConnectionString) {
	t.Helper()
	host.AccessKey = wiretest.AccessKey
	h, srv, _ := startHub(t, cfg, host)
	return h, srv, wiretest.MustConnectionString(t, srv.ConnectionString())
}

func TestAzureClientEndpointsCheckTokens(t *testing.T) {
	_, srv, cs := startAzureHub(t, Config{}, core.Config{})
	negotiateURL := srv.Origin() + "/client/negotiate?hub=chat&negotiateVersion=1"
	good := wiretest.ClientToken(t, cs, "Chat", "alice")
	if r := wiretest.Request(t, http.MethodPost, negotiateURL, good, ""); r.Status != http.StatusOK || !strings.Contains(r.Body, `"connectionToken"`) {
		t.Fatalf("negotiate with a good token: %d %s", r.Status, r.Body)
	}
	otherKey := wiretest.MustConnectionString(t, "Endpoint="+srv.Origin()+";AccessKey=another-key;Version=1.0;")
	viaPortKey := wiretest.MustConnectionString(t, "Endpoint=http://127.0.0.1;Port="+strings.TrimPrefix(srv.Origin(), "http://127.0.0.1:")+";AccessKey="+wiretest.AccessKey+";")
	cases := []struct {
		name, url, token string
		status           int
	}{
		{"no token", negotiateURL, "", http.StatusUnauthorized},
		{"wrong key", negotiateURL, wiretest.ClientToken(t, otherKey, "chat", ""), http.StatusUnauthorized},
		{"token for another hub", negotiateURL, wiretest.ClientToken(t, cs, "other", ""), http.StatusUnauthorized},
		{"not a token", negotiateURL, "a.b.c", http.StatusUnauthorized},
		{"two hub parameters", negotiateURL + "&hub=chat", good, http.StatusBadRequest},
		{"invalid hub name", srv.Origin() + "/client/negotiate?hub=1chat", good, http.StatusBadRequest},
		{"aud without the Port key's port", negotiateURL, wiretest.ClientToken(t, viaPortKey, "chat", ""), http.StatusOK},
		{"skipping negotiate", srv.Origin() + "/client/?hub=chat", good, http.StatusNotFound},
	}
	for _, tc := range cases {
		hc := wiretest.NewHTTPConn(t, tc.url, "")
		if tc.token != "" {
			hc.Header.Set("Authorization", "Bearer "+tc.token)
		}
		req := hc.Post
		if strings.Contains(tc.url, "/client/?") {
			req = func(string) wiretest.HTTPResult { return wiretest.DialResult(t, wiretest.WSURL(tc.url, ""), hc.Header) }
		}
		if r := req(""); r.Status != tc.status {
			t.Errorf("%s: got %d %q, want %d", tc.name, r.Status, r.Body, tc.status)
		}
	}
}

// Server-Sent Events carry the token as access_token; every request of the
// connection needs it.
func TestAzureTokenOnEveryTransportRequest(t *testing.T) {
	_, srv, cs := startAzureHub(t, Config{}, core.Config{})
	token := wiretest.ClientToken(t, cs, "chat", "")
	n := struct{ ConnectionToken, ConnectionID string }{}
	r := wiretest.Request(t, http.MethodPost, srv.Origin()+"/client/negotiate?hub=chat&negotiateVersion=1", token, "")
	if err := json.Unmarshal([]byte(r.Body), &n); err != nil {
		t.Fatal(err)
	}
	stream := wiretest.NewHTTPConn(t, srv.Origin()+"/client/?hub=chat&access_token="+token, n.ConnectionToken)
	s := stream.OpenSSE()
	if s.Resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream: %d", s.Resp.StatusCode)
	}
	bare := wiretest.NewHTTPConn(t, srv.Origin()+"/client/?hub=chat", n.ConnectionToken)
	bare.Post(jsonHandshake).Expect(t, "POST without a token", http.StatusUnauthorized, "Unauthorized.")
	bare.Header.Set("Authorization", "Bearer "+token)
	bare.Post(jsonHandshake).Expect(t, "POST with the token", http.StatusOK, "")
	if got := s.Event(); got != "{}\x1e"+onConnectedRecord(n.ConnectionID) {
		t.Fatalf("got %q", got)
	}
}

// The REST API reaches clients that connected through the client endpoint,
// in both API versions, and nothing crosses hub names.
func TestAzureRESTDeliversToServerlessClients(t *testing.T) {
	_, _, cs := startAzureHub(t, Config{}, core.Config{})
	alice, toAlice := wiretest.DialProbe(t, wiretest.Serverless(t, cs, "Chat", "alice", signalr.JSONProtocol{}))
	bob, toBob := wiretest.DialProbe(t, wiretest.Serverless(t, cs, "chat", "bob", signalr.MessagePackProtocol{}))
	_, toOther := wiretest.DialProbe(t, wiretest.Serverless(t, cs, "other", "alice", signalr.JSONProtocol{}))
	ctx := context.Background()
	for _, version := range []string{azure.RESTAPIV1, azure.RESTAPI20220601} {
		rest, err := azure.NewRESTClient(cs, "CHAT", azure.RESTOptions{APIVersion: version, MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		send := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", version, err)
			}
		}
		p := func(s string) json.RawMessage {
			return json.RawMessage(`{"payload.Timestamp":1,"v":"` + version + `","step":"` + s + `"}`)
		}
		send(rest.Broadcast(ctx, "RecordLatency", []json.RawMessage{p("all")}))
		send(rest.SendToUser(ctx, "bob", "RecordLatency", []json.RawMessage{p("bob")}))
		send(rest.SendToConnection(ctx, alice.ConnectionID(), "RecordLatency", []json.RawMessage{p("alice")}))
		send(rest.AddConnectionToGroup(ctx, "g/1", bob.ConnectionID()))
		send(rest.SendToGroup(ctx, "g/1", "RecordLatency", []json.RawMessage{p("group")}))
		send(rest.RemoveConnectionFromGroup(ctx, "g/1", bob.ConnectionID()))
		send(rest.SendToGroup(ctx, "g/1", "RecordLatency", []json.RawMessage{p("nobody")}))
		send(rest.Broadcast(ctx, "RecordLatency", []json.RawMessage{p("not bob")}, bob.ConnectionID()))
		send(rest.Broadcast(ctx, "RecordLatency", []json.RawMessage{p("end")}))
		wiretest.ExpectPayloads(t, "alice", toAlice, string(p("all")), string(p("alice")), string(p("not bob")), string(p("end")))
		wiretest.ExpectPayloads(t, "bob", toBob, string(p("all")), string(p("bob")), string(p("group")), string(p("end")))
	}
	select {
	case r := <-toOther:
		t.Fatalf("a client of another hub name got %+v", r)
	default:
	}
}

func TestAzureRESTStatusCodes(t *testing.T) {
	_, srv, cs := startAzureHub(t, Config{}, core.Config{})
	c, _ := wiretest.DialProbe(t, wiretest.Serverless(t, cs, "chat", "", signalr.JSONProtocol{}))
	rest := func(method, path, token, body string) wiretest.HTTPResult {
		return wiretest.Request(t, method, srv.Origin()+path, token, body)
	}
	restToken := func(path string) string { return wiretest.RESTToken(t, wiretest.AccessKey, srv.Origin()+path) }
	// A token from an independent JWT implementation is accepted.
	jwtToken := func(key, aud string) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
			"aud": aud, "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
		}).SignedString([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	msg := `{"Target":"RecordLatency","Arguments":[{"x":1}]}`
	v1 := "/api/v1/hubs/chat"
	member := "/api/hubs/chat/groups/g/connections/" + c.ConnectionID()
	cases := []struct {
		name, method, path, token, body string
		status                          int
	}{
		{"golang-jwt token", http.MethodPost, v1, jwtToken(wiretest.AccessKey, srv.Origin()+v1), msg, http.StatusAccepted},
		{"golang-jwt token, wrong key", http.MethodPost, v1, jwtToken("wrong", srv.Origin()+v1), msg, http.StatusUnauthorized},
		{"golang-jwt token, wrong aud", http.MethodPost, v1, jwtToken(wiretest.AccessKey, srv.Origin()+v1+"/users/x"), msg, http.StatusUnauthorized},
		{"no token", http.MethodPost, v1, "", msg, http.StatusUnauthorized},
		{"2022-06-01 send", http.MethodPost, "/api/hubs/chat/:send?api-version=2022-06-01", restToken("/api/hubs/chat/:send"), msg, http.StatusAccepted},
		{"no api-version", http.MethodPost, "/api/hubs/chat/:send", restToken("/api/hubs/chat/:send"), msg, http.StatusBadRequest},
		{"add to group", http.MethodPut, member + "?api-version=2022-06-01", restToken(member), "", http.StatusOK},
		{"remove from group", http.MethodDelete, member + "?api-version=2022-06-01", restToken(member), "", http.StatusOK},
		{"add an unknown connection", http.MethodPut, v1 + "/groups/g/connections/nope", restToken(v1 + "/groups/g/connections/nope"), "", http.StatusNotFound},
		{"no target", http.MethodPost, v1, restToken(v1), `{"arguments":[]}`, http.StatusBadRequest},
		{"not JSON", http.MethodPost, v1, restToken(v1), `{`, http.StatusBadRequest},
		{"body over 1 MB", http.MethodPost, v1, restToken(v1), `{"target":"x","arguments":["` + strings.Repeat("a", 1<<20) + `"]}`, http.StatusRequestEntityTooLarge},
		{"GET a send route", http.MethodGet, v1, restToken(v1), "", http.StatusMethodNotAllowed},
		{"unknown route", http.MethodPost, v1 + "/nothing/here/at/all", restToken(v1 + "/nothing/here/at/all"), msg, http.StatusNotFound},
		{"invalid hub name", http.MethodPost, "/api/v1/hubs/9chat", restToken("/api/v1/hubs/9chat"), msg, http.StatusBadRequest},
	}
	for _, tc := range cases {
		if r := rest(tc.method, tc.path, tc.token, tc.body); r.Status != tc.status {
			t.Errorf("%s: got %d %q, want %d", tc.name, r.Status, r.Body, tc.status)
		}
	}
}

func TestAzureConnectionQuota(t *testing.T) {
	h, srv, cs := startAzureHub(t, Config{}, core.Config{ConnectionQuota: 3})
	token := wiretest.ClientToken(t, cs, "chat", "")
	url := srv.Origin() + "/client/negotiate?hub=chat&negotiateVersion=1"
	for i := 1; i <= 3; i++ {
		if r := wiretest.Request(t, http.MethodPost, url, token, ""); r.Status != http.StatusOK {
			t.Fatalf("negotiate %d: %d %s", i, r.Status, r.Body)
		}
	}
	wiretest.Request(t, http.MethodPost, url, token, "").Expect(t, "4th negotiate", http.StatusTooManyRequests, "Connection count reaches limit.")
	wiretest.Request(t, http.MethodPost, srv.URL()+"/negotiate", "", "").Expect(t, "app path negotiate", http.StatusTooManyRequests, "Connection count reaches limit.")
	if got := wiretest.DialResult(t, wiretest.WSURL(srv.URL(), ""), nil); got.Status != http.StatusTooManyRequests || got.Body != throttle.ConnectionLimitText {
		t.Fatalf("WebSocket without negotiate: %d %q", got.Status, got.Body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), wiretest.Timeout)
	defer cancel()
	_, err := signalrclient.Dial(ctx, wiretest.Serverless(t, cs, "chat", "", signalr.JSONProtocol{}))
	if reason, ok := clientconn.ClassifyThrottle(err); !ok || reason != throttle.ConnectionLimit {
		t.Fatalf("probe sees %v as %q %v, want %s", err, reason, ok, throttle.ConnectionLimit)
	}
	if got := testutil.ToFloat64(h.Metrics.Throttled.WithLabelValues(throttle.ConnectionLimit)); got != 4 {
		t.Fatalf("throttled{connection_limit} = %v, want 4", got)
	}
	// Unused negotiations expire and free the quota: expire them as the
	// heartbeat does once their time has passed.
	h.tokens.Expire(h.Now() + int64(h.negotiateTTL) + 1)
	if r := wiretest.Request(t, http.MethodPost, url, token, ""); r.Status != http.StatusOK {
		t.Fatalf("negotiate after expiry: %d %s", r.Status, r.Body)
	}
}

func TestAzureMessageRateLimit(t *testing.T) {
	// One message per 100 s, and a burst of one: the second message of the
	// hub name is over the limit, whoever sends it.
	h, srv, cs := startAzureHub(t, Config{}, core.Config{MessageRateLimit: 0.01})
	c, ch := wiretest.DialProbe(t, wiretest.Serverless(t, cs, "chat", "", signalr.JSONProtocol{}))
	ctx := context.Background()
	if err := c.Send(ctx, "Echo", json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	wiretest.ExpectPayloads(t, "client", ch, `{"n":1}`)
	if err := c.Send(ctx, "Echo", json.RawMessage(`{"n":2}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(wiretest.Timeout):
		t.Fatal("the connection over the limit was not closed")
	}
	var ce *clientconn.CloseError
	if err := c.Err(); !errors.As(err, &ce) || ce.Message != "Message count reaches limit." {
		t.Fatalf("connection ended with %v", err)
	}
	if reason, ok := clientconn.ClassifyThrottle(c.Err()); !ok || reason != throttle.MessageLimit {
		t.Fatalf("probe classifies %v as %q", c.Err(), reason)
	}
	rest, err := azure.NewRESTClient(cs, "chat", azure.RESTOptions{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	err = rest.Broadcast(ctx, "RecordLatency", []json.RawMessage{json.RawMessage(`{}`)})
	if reason, ok := azure.ClassifyRESTThrottle(err); !ok || reason != throttle.MessageLimit {
		t.Fatalf("REST send: %v classified %q, want 429 %s", err, reason, throttle.MessageLimit)
	}
	if got := testutil.ToFloat64(h.Metrics.Throttled.WithLabelValues(throttle.MessageLimit)); got != 2 {
		t.Fatalf("throttled{message_limit} = %v, want 2", got)
	}
	// Another hub name has its own budget; the app path's is "signalrbench".
	raw := wiretest.Connect(t, srv)
	raw.Send(`{"type":1,"target":"Echo","arguments":[{"a":1}]}`)
	raw.Send(`{"type":1,"target":"Echo","arguments":[{"a":2}]}`)
	if got := raw.NextNonPingRecord(); got != recordLatencyRecord(`{"a":1}`) {
		t.Fatalf("got %s", got)
	}
	if got := raw.NextNonPingRecord(); got != `{"type":7,"error":"Message count reaches limit."}` {
		t.Fatalf("got %s", got)
	}
	raw.ExpectClosed()
}

func TestAzureDefaultModeRedirect(t *testing.T) {
	_, srv, cs := startAzureHub(t, Config{RedirectNegotiate: true}, core.Config{})
	r := wiretest.Request(t, http.MethodPost, srv.URL()+"/negotiate?negotiateVersion=1&user=carol", "", "")
	var redirect struct{ URL, AccessToken string }
	if err := json.Unmarshal([]byte(r.Body), &redirect); err != nil || r.Status != http.StatusOK {
		t.Fatalf("redirect: %d %s", r.Status, r.Body)
	}
	if redirect.URL != srv.Origin()+"/client/?hub=signalrbench" {
		t.Fatalf("url = %s", redirect.URL)
	}
	claims, err := azure.VerifyToken([]byte(wiretest.AccessKey), redirect.AccessToken, redirect.URL, time.Now())
	if err != nil || claims.UserID != "carol" {
		t.Fatalf("redirect token: %+v %v", claims, err)
	}

	// The probe follows the redirect; a client on the app path skipping
	// negotiate shares the hub name.
	carol, toCarol := wiretest.DialProbe(t, signalrclient.Options{URL: srv.URL() + "?user=carol"})
	direct := wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), ""))
	direct.Handshake()
	direct.Next()
	rest, err := azure.NewRESTClient(cs, "signalrbench", azure.RESTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := rest.SendToUser(ctx, "carol", "RecordLatency", []json.RawMessage{json.RawMessage(`{"to":"carol"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := rest.Broadcast(ctx, "RecordLatency", []json.RawMessage{json.RawMessage(`{"to":"all"}`)}); err != nil {
		t.Fatal(err)
	}
	wiretest.ExpectPayloads(t, "carol", toCarol, `{"to":"carol"}`, `{"to":"all"}`)
	if got := direct.NextNonPingRecord(); got != recordLatencyRecord(`{"to":"all"}`) {
		t.Fatalf("app path client got %s", got)
	}
	// Hub methods work through the service as on the app server.
	if _, err := carol.Invoke(ctx, "Echo", json.RawMessage(`{"e":1}`)); err != nil {
		t.Fatal(err)
	}
	wiretest.ExpectPayloads(t, "carol", toCarol, `{"e":1}`)
}
