package hub

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/internal/clientconn"
	"github.com/hubprobe/hubprobe/probe"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/hubprobe/hubprobe/throttle"
)

// testAccessKey looks like a real key: base64, used as its UTF-8 bytes.
const testAccessKey = "aHVicHJvYmUtdGVzdC1rZXktMDEyMzQ1Njc4OWFiY2RlZg=="

func startAzureHub(t *testing.T, opts Options) (*Hub, *Server, azure.ConnectionString) {
	t.Helper()
	opts.AccessKey = testAccessKey
	h, srv, _ := startHub(t, opts)
	cs, err := azure.ParseConnectionString(srv.ConnectionString())
	if err != nil {
		t.Fatal(err)
	}
	return h, srv, cs
}

func mustConnectionString(t *testing.T, s string) azure.ConnectionString {
	t.Helper()
	cs, err := azure.ParseConnectionString(s)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// request sends method to url with a bearer token (none when empty).
func request(t *testing.T, method, url, token, body string) httpResult {
	t.Helper()
	hc := newHTTPConn(t, url, "")
	if token != "" {
		hc.header.Set("Authorization", "Bearer "+token)
	}
	return hc.do(method, strings.NewReader(body), "")
}

func clientToken(t *testing.T, cs azure.ConnectionString, hub, user string) string {
	t.Helper()
	tok, err := azure.ClientToken(cs, hub, user, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestAzureClientEndpointsCheckTokens(t *testing.T) {
	_, srv, cs := startAzureHub(t, Options{})
	negotiateURL := srv.Origin() + "/client/negotiate?hub=chat&negotiateVersion=1"
	good := clientToken(t, cs, "Chat", "alice")
	if r := request(t, http.MethodPost, negotiateURL, good, ""); r.status != http.StatusOK || !strings.Contains(r.body, `"connectionToken"`) {
		t.Fatalf("negotiate with a good token: %d %s", r.status, r.body)
	}
	otherKey := mustConnectionString(t, "Endpoint="+srv.Origin()+";AccessKey=another-key;Version=1.0;")
	viaPortKey := mustConnectionString(t, "Endpoint=http://127.0.0.1;Port="+strings.TrimPrefix(srv.Origin(), "http://127.0.0.1:")+";AccessKey="+testAccessKey+";")
	cases := []struct {
		name, url, token string
		status           int
	}{
		{"no token", negotiateURL, "", http.StatusUnauthorized},
		{"wrong key", negotiateURL, clientToken(t, otherKey, "chat", ""), http.StatusUnauthorized},
		{"token for another hub", negotiateURL, clientToken(t, cs, "other", ""), http.StatusUnauthorized},
		{"not a token", negotiateURL, "a.b.c", http.StatusUnauthorized},
		{"two hub parameters", negotiateURL + "&hub=chat", good, http.StatusBadRequest},
		{"invalid hub name", srv.Origin() + "/client/negotiate?hub=1chat", good, http.StatusBadRequest},
		{"aud without the Port key's port", negotiateURL, clientToken(t, viaPortKey, "chat", ""), http.StatusOK},
		{"skipping negotiate", srv.Origin() + "/client/?hub=chat", good, http.StatusNotFound},
	}
	for _, tc := range cases {
		hc := newHTTPConn(t, tc.url, "")
		if tc.token != "" {
			hc.header.Set("Authorization", "Bearer "+tc.token)
		}
		req := hc.post
		if strings.Contains(tc.url, "/client/?") {
			req = func(string) httpResult { return dialResult(t, wsURL(tc.url, ""), hc.header) }
		}
		if r := req(""); r.status != tc.status {
			t.Errorf("%s: got %d %q, want %d", tc.name, r.status, r.body, tc.status)
		}
	}
}

func dialResult(t *testing.T, url string, header http.Header) httpResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ws, resp, err := websocketDialer().DialContext(ctx, url, header)
	if err == nil {
		ws.Close()
		return httpResult{status: http.StatusSwitchingProtocols}
	}
	if resp == nil {
		t.Fatalf("dial: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpResult{status: resp.StatusCode, body: string(b)}
}

// Server-Sent Events carry the token as access_token; every request of the
// connection needs it.
func TestAzureTokenOnEveryTransportRequest(t *testing.T) {
	_, srv, cs := startAzureHub(t, Options{})
	token := clientToken(t, cs, "chat", "")
	n := struct{ ConnectionToken, ConnectionID string }{}
	r := request(t, http.MethodPost, srv.Origin()+"/client/negotiate?hub=chat&negotiateVersion=1", token, "")
	if err := json.Unmarshal([]byte(r.body), &n); err != nil {
		t.Fatal(err)
	}
	stream := newHTTPConn(t, srv.Origin()+"/client/?hub=chat&access_token="+token, n.ConnectionToken)
	s := stream.openSSE()
	if s.resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream: %d", s.resp.StatusCode)
	}
	bare := newHTTPConn(t, srv.Origin()+"/client/?hub=chat", n.ConnectionToken)
	bare.post(jsonHandshake).expect(t, "POST without a token", http.StatusUnauthorized, "Unauthorized.")
	bare.header.Set("Authorization", "Bearer "+token)
	bare.post(jsonHandshake).expect(t, "POST with the token", http.StatusOK, "")
	if got := s.event(); got != "{}\x1e"+onConnectedRecord(n.ConnectionID) {
		t.Fatalf("got %q", got)
	}
}

// inbox collects one kind of invocation a probe connection receives.
type received struct {
	target string
	args   string
}

func dialProbe(t *testing.T, opts probe.Options) (*probe.Conn, chan received) {
	t.Helper()
	ch := make(chan received, 64)
	opts.Handlers = map[string]probe.Handler{}
	for _, target := range []string{"OnConnected", "RecordLatency"} {
		opts.Handlers[target] = func(args []json.RawMessage) {
			b, _ := json.Marshal(args)
			ch <- received{target: target, args: string(b)}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := probe.Dial(ctx, opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	if got := expectReceived(t, ch); got.target != "OnConnected" || got.args != `["`+c.ConnectionID()+`"]` {
		t.Fatalf("first message %+v, want OnConnected(%s)", got, c.ConnectionID())
	}
	return c, ch
}

func expectReceived(t *testing.T, ch chan received) received {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(testTimeout):
		t.Fatal("timed out waiting for a message")
		return received{}
	}
}

// expectPayloads asserts the next RecordLatency payloads of ch, in order.
func expectPayloads(t *testing.T, who string, ch chan received, payloads ...string) {
	t.Helper()
	for _, p := range payloads {
		if got := expectReceived(t, ch); got.target != "RecordLatency" || got.args != "["+p+"]" {
			t.Fatalf("%s got %+v, want RecordLatency(%s)", who, got, p)
		}
	}
}

func serverless(t *testing.T, cs azure.ConnectionString, hub, user string, proto signalr.HubProtocol) probe.Options {
	t.Helper()
	o, err := probe.ServerlessOptions(cs, hub, user)
	if err != nil {
		t.Fatal(err)
	}
	o.Protocol = proto
	return o
}

// The REST API reaches clients that connected through the client endpoint,
// in both API versions, and nothing crosses hub names.
func TestAzureRESTDeliversToServerlessClients(t *testing.T) {
	_, _, cs := startAzureHub(t, Options{})
	alice, toAlice := dialProbe(t, serverless(t, cs, "Chat", "alice", signalr.JSONProtocol{}))
	bob, toBob := dialProbe(t, serverless(t, cs, "chat", "bob", signalr.MessagePackProtocol{}))
	_, toOther := dialProbe(t, serverless(t, cs, "other", "alice", signalr.JSONProtocol{}))
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
		expectPayloads(t, "alice", toAlice, string(p("all")), string(p("alice")), string(p("not bob")), string(p("end")))
		expectPayloads(t, "bob", toBob, string(p("all")), string(p("bob")), string(p("group")), string(p("end")))
	}
	select {
	case r := <-toOther:
		t.Fatalf("a client of another hub name got %+v", r)
	default:
	}
}

func TestAzureRESTStatusCodes(t *testing.T) {
	_, srv, cs := startAzureHub(t, Options{})
	c, _ := dialProbe(t, serverless(t, cs, "chat", "", signalr.JSONProtocol{}))
	rest := func(method, path, token, body string) httpResult {
		return request(t, method, srv.Origin()+path, token, body)
	}
	restToken := func(path string) string {
		tok, err := azure.RESTToken(cs, srv.Origin()+path, 0)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
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
		{"golang-jwt token", http.MethodPost, v1, jwtToken(testAccessKey, srv.Origin()+v1), msg, http.StatusAccepted},
		{"golang-jwt token, wrong key", http.MethodPost, v1, jwtToken("wrong", srv.Origin()+v1), msg, http.StatusUnauthorized},
		{"golang-jwt token, wrong aud", http.MethodPost, v1, jwtToken(testAccessKey, srv.Origin()+v1+"/users/x"), msg, http.StatusUnauthorized},
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
		if r := rest(tc.method, tc.path, tc.token, tc.body); r.status != tc.status {
			t.Errorf("%s: got %d %q, want %d", tc.name, r.status, r.body, tc.status)
		}
	}
}

func TestAzureConnectionQuota(t *testing.T) {
	h, srv, cs := startAzureHub(t, Options{ConnectionQuota: 3})
	token := clientToken(t, cs, "chat", "")
	url := srv.Origin() + "/client/negotiate?hub=chat&negotiateVersion=1"
	for i := 1; i <= 3; i++ {
		if r := request(t, http.MethodPost, url, token, ""); r.status != http.StatusOK {
			t.Fatalf("negotiate %d: %d %s", i, r.status, r.body)
		}
	}
	request(t, http.MethodPost, url, token, "").expect(t, "4th negotiate", http.StatusTooManyRequests, "Connection count reaches limit.")
	request(t, http.MethodPost, srv.URL()+"/negotiate", "", "").expect(t, "app path negotiate", http.StatusTooManyRequests, "Connection count reaches limit.")
	if got := dialResult(t, wsURL(srv.URL(), ""), nil); got.status != http.StatusTooManyRequests || got.body != throttle.ConnectionLimitText {
		t.Fatalf("WebSocket without negotiate: %d %q", got.status, got.body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err := probe.Dial(ctx, serverless(t, cs, "chat", "", signalr.JSONProtocol{}))
	if reason, ok := clientconn.ClassifyThrottle(err); !ok || reason != throttle.ConnectionLimit {
		t.Fatalf("probe sees %v as %q %v, want %s", err, reason, ok, throttle.ConnectionLimit)
	}
	if got := testutil.ToFloat64(h.metrics.throttled.WithLabelValues(throttle.ConnectionLimit)); got != 4 {
		t.Fatalf("throttled{connection_limit} = %v, want 4", got)
	}
	// Unused negotiations expire and free the quota.
	h.tokens.mu.Lock()
	for _, e := range h.tokens.entries {
		e.expires = 0
	}
	h.tokens.mu.Unlock()
	h.tokens.expire(h.now())
	if r := request(t, http.MethodPost, url, token, ""); r.status != http.StatusOK {
		t.Fatalf("negotiate after expiry: %d %s", r.status, r.body)
	}
}

func TestConnectionQuotaOptions(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want int
	}{{Options{}, 0}, {Options{Units: 2}, 2000}, {Options{Units: 100, ConnectionQuota: 3}, 3}} {
		if got := tc.opts.connectionQuota(); got != tc.want {
			t.Errorf("%+v: quota %d, want %d", tc.opts, got, tc.want)
		}
	}
	for _, bad := range []Options{
		{RedirectNegotiate: true},
		{AccessKey: "k", Path: "/my-hub"},
		{AccessKey: "k", Path: "/client"},
		{Units: -1},
		{MessageRateLimit: -1},
	} {
		if _, err := New(bad, nil); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

func TestAzureMessageRateLimit(t *testing.T) {
	// One message per 100 s, and a burst of one: the second message of the
	// hub name is over the limit, whoever sends it.
	h, srv, cs := startAzureHub(t, Options{MessageRateLimit: 0.01})
	c, ch := dialProbe(t, serverless(t, cs, "chat", "", signalr.JSONProtocol{}))
	ctx := context.Background()
	if err := c.Send(ctx, "Echo", json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	expectPayloads(t, "client", ch, `{"n":1}`)
	if err := c.Send(ctx, "Echo", json.RawMessage(`{"n":2}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(testTimeout):
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
	if got := testutil.ToFloat64(h.metrics.throttled.WithLabelValues(throttle.MessageLimit)); got != 2 {
		t.Fatalf("throttled{message_limit} = %v, want 2", got)
	}
	// Another hub name has its own budget; the app path's is "signalrbench".
	raw := connect(t, srv)
	raw.send(`{"type":1,"target":"Echo","arguments":[{"a":1}]}`)
	raw.send(`{"type":1,"target":"Echo","arguments":[{"a":2}]}`)
	if got := raw.nextNonPingRecord(); got != recordLatencyRecord(`{"a":1}`) {
		t.Fatalf("got %s", got)
	}
	if got := raw.nextNonPingRecord(); got != `{"type":7,"error":"Message count reaches limit."}` {
		t.Fatalf("got %s", got)
	}
	raw.expectClosed()
}

func TestAzureDefaultModeRedirect(t *testing.T) {
	_, srv, cs := startAzureHub(t, Options{RedirectNegotiate: true})
	r := request(t, http.MethodPost, srv.URL()+"/negotiate?negotiateVersion=1&user=carol", "", "")
	var redirect struct{ URL, AccessToken string }
	if err := json.Unmarshal([]byte(r.body), &redirect); err != nil || r.status != http.StatusOK {
		t.Fatalf("redirect: %d %s", r.status, r.body)
	}
	if redirect.URL != srv.Origin()+"/client/?hub=signalrbench" {
		t.Fatalf("url = %s", redirect.URL)
	}
	claims, err := azure.VerifyToken([]byte(testAccessKey), redirect.AccessToken, redirect.URL, time.Now())
	if err != nil || claims.UserID != "carol" {
		t.Fatalf("redirect token: %+v %v", claims, err)
	}

	// The probe follows the redirect; a client on the app path skipping
	// negotiate shares the hub name.
	carol, toCarol := dialProbe(t, probe.Options{URL: srv.URL() + "?user=carol"})
	direct := dialRaw(t, wsURL(srv.URL(), ""))
	direct.handshake()
	direct.next()
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
	expectPayloads(t, "carol", toCarol, `{"to":"carol"}`, `{"to":"all"}`)
	if got := direct.nextNonPingRecord(); got != recordLatencyRecord(`{"to":"all"}`) {
		t.Fatalf("app path client got %s", got)
	}
	// Hub methods work through the service as on the app server.
	if _, err := carol.Invoke(ctx, "Echo", json.RawMessage(`{"e":1}`)); err != nil {
		t.Fatal(err)
	}
	expectPayloads(t, "carol", toCarol, `{"e":1}`)
}
