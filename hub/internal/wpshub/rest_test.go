package wpshub

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

func TestWebPubSubRESTSends(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	alice1 := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "alice", allRoles...)
	alice2 := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSONReliable, "alice")
	bob := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "bob")
	other := wiretest.ConnectWPS(t, srv, "other", webpubsub.ProtocolJSON, "alice")
	alice1.Send(`{"type":"joinGroup","group":"g","ackId":1}`)
	alice1.ExpectAck(1, "")
	api := wiretest.NewRESTAPI(t, srv, "chat")

	api.Expect(api.API.SendToAll(), "text/plain", "to all", http.StatusAccepted)
	for _, c := range []*wiretest.WPSClient{alice1, bob} {
		c.ExpectServerMessage("text", `"to all"`)
	}
	if got := alice2.NextRaw(); got != `{"sequenceId":1,"type":"message","from":"server","dataType":"text","data":"to all"}` {
		t.Fatalf("reliable client got %s", got)
	}
	api.Expect(api.API.SendToUser("alice"), "application/json; charset=utf-8", `{"to":"alice"}`, http.StatusAccepted)
	alice1.ExpectServerMessage("json", `{"to":"alice"}`)
	alice2.Next()
	api.Expect(api.API.SendToGroup("g"), "application/octet-stream", "\x00\x01", http.StatusAccepted)
	alice1.ExpectServerMessage("binary", `"AAE="`)
	api.Expect(api.API.SendToConnection(bob.Connected.ConnectionID), "text/plain", "to bob", http.StatusAccepted)
	bob.ExpectServerMessage("text", `"to bob"`)
	api.Expect(api.API.SendToAll(alice1.Connected.ConnectionID, alice2.Connected.ConnectionID), "text/plain", "not alice", http.StatusAccepted)
	bob.ExpectServerMessage("text", `"not alice"`)

	// None of it crossed into the other hub, and the excluded connections
	// got nothing more: the next frame each gets is the next one sent.
	otherAPI := wiretest.NewRESTAPI(t, srv, "other")
	otherAPI.Expect(otherAPI.API.SendToAll(), "text/plain", "other hub", http.StatusAccepted)
	other.ExpectServerMessage("text", `"other hub"`)
	api.Expect(api.API.SendToUser("alice"), "text/plain", "last", http.StatusAccepted)
	alice1.ExpectServerMessage("text", `"last"`)
	if got := alice2.Next(); got.SequenceID != 3 || string(got.Data) != "last" {
		t.Fatalf("reliable client got %+v, want message 3 \"last\"", got)
	}
}

func TestWebPubSubRESTGroupsAndExists(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	a := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "alice")
	b := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "bob")
	api := wiretest.NewRESTAPI(t, srv, "chat")
	aID, bID := a.Connected.ConnectionID, b.Connected.ConnectionID

	api.Expect(api.API.GroupExists("g"), "", "", http.StatusNotFound)
	api.Expect(api.API.AddConnectionToGroup("g", aID), "", "", http.StatusOK)
	api.Expect(api.API.AddConnectionToGroup("g", "no-such-connection"), "", "", http.StatusNotFound)
	api.Expect(api.API.GroupExists("g"), "", "", http.StatusOK)
	api.Expect(api.API.AddUserToGroup("bob", "g"), "", "", http.StatusOK)
	api.Expect(api.API.SendToGroup("g"), "text/plain", "both", http.StatusAccepted)
	a.ExpectServerMessage("text", `"both"`)
	b.ExpectServerMessage("text", `"both"`)

	api.Expect(api.API.RemoveConnectionFromGroup("g", aID), "", "", http.StatusNoContent)
	api.Expect(webpubsub.Request{Method: http.MethodDelete, URL: strings.Replace(api.API.AddUserToGroup("bob", "g").URL, "/groups/g?", "/groups?", 1)}, "", "", http.StatusNoContent)
	api.Expect(api.API.GroupExists("g"), "", "", http.StatusNotFound)

	api.Expect(api.API.ConnectionExists(aID), "", "", http.StatusOK)
	api.Expect(api.API.ConnectionExists("nobody"), "", "", http.StatusNotFound)
	api.Expect(api.API.UserExists("bob"), "", "", http.StatusOK)
	api.Expect(api.API.UserExists("carol"), "", "", http.StatusNotFound)

	api.Expect(api.API.CloseConnection(bID, "done for today"), "", "", http.StatusNoContent)
	b.ExpectDisconnected("done for today", websocket.ClosePolicyViolation)
	wiretest.WaitFor(t, "bob to be gone", func() bool { return api.Call(api.API.UserExists("bob"), "", "").Status == http.StatusNotFound })
	api.Expect(api.API.SendToGroup("g"), "text/plain", "nobody", http.StatusAccepted)
	api.Expect(api.API.SendToConnection(aID), "text/plain", "a only", http.StatusAccepted)
	a.ExpectServerMessage("text", `"a only"`) // not "nobody": a left g
}

func TestWebPubSubRESTPermissions(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", roleJoinLeaveGroup)
	api := wiretest.NewRESTAPI(t, srv, "chat")
	perm := func(method, query string) webpubsub.Request {
		return webpubsub.Request{Method: method, URL: strings.Replace(api.API.ConnectionExists(c.Connected.ConnectionID).URL,
			"/connections/", "/permissions/sendToGroup/connections/", 1) + query}
	}
	api.Expect(perm(http.MethodHead, "&targetName=g"), "", "", http.StatusNotFound)
	api.Expect(perm(http.MethodPut, "&targetName=g"), "", "", http.StatusOK)
	api.Expect(perm(http.MethodHead, "&targetName=g"), "", "", http.StatusOK)
	api.Expect(perm(http.MethodHead, ""), "", "", http.StatusNotFound) // only for g
	c.Send(`{"type":"joinGroup","group":"g","ackId":1}`)
	c.ExpectAck(1, "")
	c.Send(`{"type":"sendToGroup","group":"g","ackId":2,"dataType":"text","data":"granted"}`)
	c.ExpectGroupMessage("g", "", "granted")
	c.ExpectAck(2, "")
	api.Expect(perm(http.MethodDelete, "&targetName=g"), "", "", http.StatusNoContent)
	c.Send(`{"type":"sendToGroup","group":"g","ackId":3,"data":1}`)
	c.ExpectAck(3, webpubsub.ErrorForbidden)
}

func TestWebPubSubRESTTokens(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	req := wiretest.NewRESTAPI(t, srv, "chat").API.SendToAll()
	withoutQuery := req.URL[:strings.IndexByte(req.URL, '?')]
	otherHub := strings.Replace(req.URL, "/hubs/chat/", "/hubs/other/", 1)
	for _, tc := range []struct {
		name, key, aud string
		status         int
	}{
		{"aud with the query", wiretest.AccessKey, req.URL, http.StatusAccepted},
		{"aud without the query", wiretest.AccessKey, withoutQuery, http.StatusAccepted},
		{"aud of another hub", wiretest.AccessKey, otherHub, http.StatusUnauthorized},
		{"another key", "another-key", req.URL, http.StatusUnauthorized},
	} {
		if r := wiretest.CallSigned(t, req, tc.key, tc.aud, "text/plain", tc.name); r.Status != tc.status {
			t.Errorf("%s: status %d %s, want %d", tc.name, r.Status, r.Body, tc.status)
		}
	}
	if r := wiretest.Request(t, req.Method, req.URL, "", "x"); r.Status != http.StatusUnauthorized || r.Header.Get("x-ms-error-code") != "Unauthorized" {
		t.Errorf("no token: %d %v %s", r.Status, r.Header, r.Body)
	}
	// Only the two accepted sends arrived.
	c.ExpectServerMessage("text", `"aud with the query"`)
	c.ExpectServerMessage("text", `"aud without the query"`)
}

func TestWebPubSubRESTRefusals(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	api := wiretest.NewRESTAPI(t, srv, "chat")
	send := api.API.SendToAll()
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
		{"body over 1 MiB", send, "text/plain", strings.Repeat("x", core.MaxRESTBody+1), http.StatusRequestEntityTooLarge},
		{"filter", webpubsub.Request{Method: http.MethodPost, URL: send.URL + "&filter=userId%20eq%20%27a%27"}, "text/plain", "x", http.StatusBadRequest},
		{"invalid hub", webpubsub.Request{Method: http.MethodPost, URL: strings.Replace(send.URL, "/hubs/chat/", "/hubs/9chat/", 1)}, "text/plain", "x", http.StatusBadRequest},
		{"unknown permission", webpubsub.Request{Method: http.MethodPut, URL: strings.Replace(send.URL, ":send", "permissions/everything/connections/c", 1)}, "", "", http.StatusBadRequest},
	} {
		r := api.Call(tc.req, tc.contentType, tc.body)
		if r.Status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, r.Status, r.Body, tc.status)
		}
		if tc.status == http.StatusMethodNotAllowed && r.Header.Get("Allow") != "POST" {
			t.Errorf("%s: Allow = %q", tc.name, r.Header.Get("Allow"))
		}
	}
	if r := wiretest.Request(t, http.MethodHead, srv.Origin()+"/api/health?api-version="+webpubsub.APIVersion, "", ""); r.Status != http.StatusOK {
		t.Errorf("health = %d", r.Status)
	}
}

func TestWebPubSubRESTRateLimit(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{MessageRateLimit: 1})
	api := wiretest.NewRESTAPI(t, srv, "chat")
	api.Expect(api.API.SendToAll(), "text/plain", "1", http.StatusAccepted)
	r := api.Call(api.API.SendToAll(), "text/plain", "2")
	if r.Status != http.StatusTooManyRequests || throttle.FromHTTPBody(r.Body) != throttle.MessageLimit {
		t.Fatalf("second send: %d %s, want 429 naming the message limit", r.Status, r.Body)
	}
	if got := testutil.ToFloat64(h.Metrics.Throttled.WithLabelValues(throttle.MessageLimit)); got != 1 {
		t.Errorf("throttled{message_limit} = %v, want 1", got)
	}
}
