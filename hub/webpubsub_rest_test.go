package hub

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// restAPI builds REST requests of one hub and signs each as the official
// server SDK does (aud = the whole URL, query included).
type restAPI struct {
	t   *testing.T
	api *webpubsub.REST
}

func newRESTAPI(t *testing.T, srv *Server, hub string) *restAPI {
	api, err := webpubsub.NewREST(srv.Origin(), hub, "")
	if err != nil {
		t.Fatal(err)
	}
	return &restAPI{t: t, api: api}
}

func (a *restAPI) call(req webpubsub.Request, contentType, body string) httpResult {
	a.t.Helper()
	return callSigned(a.t, req, testAccessKey, req.URL, contentType, body)
}

// callSigned sends req with a token for aud signed with key.
func callSigned(t *testing.T, req webpubsub.Request, key, aud, contentType, body string) httpResult {
	t.Helper()
	hc := newHTTPConn(t, req.URL, "")
	hc.header.Set("Authorization", "Bearer "+restToken(t, key, aud))
	if contentType != "" {
		hc.header.Set("Content-Type", contentType)
	}
	return hc.do(req.Method, strings.NewReader(body), "")
}

func (a *restAPI) expect(req webpubsub.Request, contentType, body string, status int) {
	a.t.Helper()
	if r := a.call(req, contentType, body); r.status != status {
		a.t.Fatalf("%s %s = %d %s, want %d", req.Method, req.URL, r.status, r.body, status)
	}
}

// expectServerMessage asserts the next frame is a server message as written.
func (c *wpsClient) expectServerMessage(dataType, data string) {
	c.t.Helper()
	want := `{"type":"message","from":"server","dataType":"` + dataType + `","data":` + data + `}`
	if got := c.nextRaw(); got != want {
		c.t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestWebPubSubRESTSends(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	alice1 := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "alice", allRoles...)
	alice2 := connectWPS(t, srv, "chat", webpubsub.ProtocolJSONReliable, "alice")
	bob := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "bob")
	other := connectWPS(t, srv, "other", webpubsub.ProtocolJSON, "alice")
	alice1.send(`{"type":"joinGroup","group":"g","ackId":1}`)
	alice1.expectAck(1, "")
	api := newRESTAPI(t, srv, "chat")

	api.expect(api.api.SendToAll(), "text/plain", "to all", http.StatusAccepted)
	for _, c := range []*wpsClient{alice1, bob} {
		c.expectServerMessage("text", `"to all"`)
	}
	if got := alice2.nextRaw(); got != `{"sequenceId":1,"type":"message","from":"server","dataType":"text","data":"to all"}` {
		t.Fatalf("reliable client got %s", got)
	}
	api.expect(api.api.SendToUser("alice"), "application/json; charset=utf-8", `{"to":"alice"}`, http.StatusAccepted)
	alice1.expectServerMessage("json", `{"to":"alice"}`)
	alice2.next()
	api.expect(api.api.SendToGroup("g"), "application/octet-stream", "\x00\x01", http.StatusAccepted)
	alice1.expectServerMessage("binary", `"AAE="`)
	api.expect(api.api.SendToConnection(bob.connected.ConnectionID), "text/plain", "to bob", http.StatusAccepted)
	bob.expectServerMessage("text", `"to bob"`)
	api.expect(api.api.SendToAll(alice1.connected.ConnectionID, alice2.connected.ConnectionID), "text/plain", "not alice", http.StatusAccepted)
	bob.expectServerMessage("text", `"not alice"`)

	// None of it crossed into the other hub, and the excluded connections
	// got nothing more: the next frame each gets is the next one sent.
	otherAPI := newRESTAPI(t, srv, "other")
	otherAPI.expect(otherAPI.api.SendToAll(), "text/plain", "other hub", http.StatusAccepted)
	other.expectServerMessage("text", `"other hub"`)
	api.expect(api.api.SendToUser("alice"), "text/plain", "last", http.StatusAccepted)
	alice1.expectServerMessage("text", `"last"`)
	if got := alice2.next(); got.SequenceID != 3 || string(got.Data) != "last" {
		t.Fatalf("reliable client got %+v, want message 3 \"last\"", got)
	}
}

func TestWebPubSubRESTGroupsAndExists(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	a := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "alice")
	b := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "bob")
	api := newRESTAPI(t, srv, "chat")
	aID, bID := a.connected.ConnectionID, b.connected.ConnectionID

	api.expect(api.api.GroupExists("g"), "", "", http.StatusNotFound)
	api.expect(api.api.AddConnectionToGroup("g", aID), "", "", http.StatusOK)
	api.expect(api.api.AddConnectionToGroup("g", "no-such-connection"), "", "", http.StatusNotFound)
	api.expect(api.api.GroupExists("g"), "", "", http.StatusOK)
	api.expect(api.api.AddUserToGroup("bob", "g"), "", "", http.StatusOK)
	api.expect(api.api.SendToGroup("g"), "text/plain", "both", http.StatusAccepted)
	a.expectServerMessage("text", `"both"`)
	b.expectServerMessage("text", `"both"`)

	api.expect(api.api.RemoveConnectionFromGroup("g", aID), "", "", http.StatusNoContent)
	api.expect(webpubsub.Request{Method: http.MethodDelete, URL: strings.Replace(api.api.AddUserToGroup("bob", "g").URL, "/groups/g?", "/groups?", 1)}, "", "", http.StatusNoContent)
	api.expect(api.api.GroupExists("g"), "", "", http.StatusNotFound)

	api.expect(api.api.ConnectionExists(aID), "", "", http.StatusOK)
	api.expect(api.api.ConnectionExists("nobody"), "", "", http.StatusNotFound)
	api.expect(api.api.UserExists("bob"), "", "", http.StatusOK)
	api.expect(api.api.UserExists("carol"), "", "", http.StatusNotFound)

	api.expect(api.api.CloseConnection(bID, "done for today"), "", "", http.StatusNoContent)
	b.expectDisconnected("done for today", websocket.ClosePolicyViolation)
	waitFor(t, "bob to be gone", func() bool { return api.call(api.api.UserExists("bob"), "", "").status == http.StatusNotFound })
	api.expect(api.api.SendToGroup("g"), "text/plain", "nobody", http.StatusAccepted)
	api.expect(api.api.SendToConnection(aID), "text/plain", "a only", http.StatusAccepted)
	a.expectServerMessage("text", `"a only"`) // not "nobody": a left g
}

func TestWebPubSubRESTPermissions(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", roleJoinLeaveGroup)
	api := newRESTAPI(t, srv, "chat")
	perm := func(method, query string) webpubsub.Request {
		return webpubsub.Request{Method: method, URL: strings.Replace(api.api.ConnectionExists(c.connected.ConnectionID).URL,
			"/connections/", "/permissions/sendToGroup/connections/", 1) + query}
	}
	api.expect(perm(http.MethodHead, "&targetName=g"), "", "", http.StatusNotFound)
	api.expect(perm(http.MethodPut, "&targetName=g"), "", "", http.StatusOK)
	api.expect(perm(http.MethodHead, "&targetName=g"), "", "", http.StatusOK)
	api.expect(perm(http.MethodHead, ""), "", "", http.StatusNotFound) // only for g
	c.send(`{"type":"joinGroup","group":"g","ackId":1}`)
	c.expectAck(1, "")
	c.send(`{"type":"sendToGroup","group":"g","ackId":2,"dataType":"text","data":"granted"}`)
	c.expectGroupMessage("g", "", "granted")
	c.expectAck(2, "")
	api.expect(perm(http.MethodDelete, "&targetName=g"), "", "", http.StatusNoContent)
	c.send(`{"type":"sendToGroup","group":"g","ackId":3,"data":1}`)
	c.expectAck(3, webpubsub.ErrorForbidden)
}

func TestWebPubSubRESTTokens(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	req := newRESTAPI(t, srv, "chat").api.SendToAll()
	withoutQuery := req.URL[:strings.IndexByte(req.URL, '?')]
	otherHub := strings.Replace(req.URL, "/hubs/chat/", "/hubs/other/", 1)
	for _, tc := range []struct {
		name, key, aud string
		status         int
	}{
		{"aud with the query", testAccessKey, req.URL, http.StatusAccepted},
		{"aud without the query", testAccessKey, withoutQuery, http.StatusAccepted},
		{"aud of another hub", testAccessKey, otherHub, http.StatusUnauthorized},
		{"another key", "another-key", req.URL, http.StatusUnauthorized},
	} {
		if r := callSigned(t, req, tc.key, tc.aud, "text/plain", tc.name); r.status != tc.status {
			t.Errorf("%s: status %d %s, want %d", tc.name, r.status, r.body, tc.status)
		}
	}
	if r := request(t, req.Method, req.URL, "", "x"); r.status != http.StatusUnauthorized || r.header.Get("x-ms-error-code") != "Unauthorized" {
		t.Errorf("no token: %d %v %s", r.status, r.header, r.body)
	}
	// Only the two accepted sends arrived.
	c.expectServerMessage("text", `"aud with the query"`)
	c.expectServerMessage("text", `"aud without the query"`)
}

func TestWebPubSubRESTRefusals(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	api := newRESTAPI(t, srv, "chat")
	send := api.api.SendToAll()
	for _, tc := range []struct {
		name        string
		req         webpubsub.Request
		contentType string
		body        string
		status      int
	}{
		{"unknown operation", webpubsub.Request{Method: http.MethodPost, URL: strings.Replace(send.URL, ":send", ":shout", 1)}, "text/plain", "x", http.StatusNotFound},
		{"wrong method", webpubsub.Request{Method: http.MethodGet, URL: send.URL}, "", "", http.StatusMethodNotAllowed},
		{"invalid JSON", send, "application/json", "{", http.StatusBadRequest},
		{"unknown Content-Type", send, "image/png", "x", http.StatusBadRequest},
		{"body over 1 MiB", send, "text/plain", strings.Repeat("x", restMaxBody+1), http.StatusRequestEntityTooLarge},
		{"filter", webpubsub.Request{Method: http.MethodPost, URL: send.URL + "&filter=userId%20eq%20%27a%27"}, "text/plain", "x", http.StatusBadRequest},
		{"invalid hub", webpubsub.Request{Method: http.MethodPost, URL: strings.Replace(send.URL, "/hubs/chat/", "/hubs/9chat/", 1)}, "text/plain", "x", http.StatusBadRequest},
		{"unknown permission", webpubsub.Request{Method: http.MethodPut, URL: strings.Replace(send.URL, ":send", "permissions/everything/connections/c", 1)}, "", "", http.StatusBadRequest},
	} {
		r := api.call(tc.req, tc.contentType, tc.body)
		if r.status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, r.status, r.body, tc.status)
		}
		if tc.status == http.StatusMethodNotAllowed && r.header.Get("Allow") != "POST" {
			t.Errorf("%s: Allow = %q", tc.name, r.header.Get("Allow"))
		}
	}
	if r := request(t, http.MethodHead, srv.Origin()+"/api/health?api-version="+webpubsub.APIVersion, "", ""); r.status != http.StatusOK {
		t.Errorf("health = %d", r.status)
	}
}

// The SignalR emulation's REST API shares the /api/hubs/ paths; its
// api-version keeps the two apart.
func TestWebPubSubRESTBesideSignalR(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	signalRSend := webpubsub.Request{Method: http.MethodPost, URL: srv.Origin() + "/api/hubs/chat/:send?api-version=2022-06-01"}
	aud := signalRSend.URL[:strings.IndexByte(signalRSend.URL, '?')]
	if r := callSigned(t, signalRSend, testAccessKey, aud, "application/json", `{"target":"T","arguments":[]}`); r.status != http.StatusAccepted {
		t.Fatalf("SignalR send: %d %s", r.status, r.body)
	}
	api := newRESTAPI(t, srv, "chat")
	api.expect(api.api.SendToAll(), "text/plain", "web pubsub", http.StatusAccepted)
	c.expectServerMessage("text", `"web pubsub"`) // and not the SignalR invocation
}

func TestWebPubSubRESTRateLimit(t *testing.T) {
	h, srv, _ := startWPSHub(t, Options{MessageRateLimit: 1})
	api := newRESTAPI(t, srv, "chat")
	api.expect(api.api.SendToAll(), "text/plain", "1", http.StatusAccepted)
	r := api.call(api.api.SendToAll(), "text/plain", "2")
	if r.status != http.StatusTooManyRequests || throttle.FromHTTPBody(r.body) != throttle.MessageLimit {
		t.Fatalf("second send: %d %s, want 429 naming the message limit", r.status, r.body)
	}
	if got := testutil.ToFloat64(h.metrics.throttled.WithLabelValues(throttle.MessageLimit)); got != 1 {
		t.Errorf("throttled{message_limit} = %v, want 1", got)
	}
}
