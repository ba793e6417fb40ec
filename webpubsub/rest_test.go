package webpubsub

import (
	"strings"
	"testing"
)

func TestRESTRequests(t *testing.T) {
	r, err := NewREST("https://svc.webpubsub.azure.com:8443/", "chat", "")
	if err != nil {
		t.Fatal(err)
	}
	const base = "https://svc.webpubsub.azure.com:8443/api/hubs/chat"
	const v = "api-version=2024-12-01"
	for _, tc := range []struct {
		name string
		got  Request
		want Request
	}{
		{"send to all", r.SendToAll(), Request{"POST", base + "/:send?" + v}},
		{"send to all but two", r.SendToAll("c1", "c 2"), Request{"POST", base + "/:send?" + v + "&excluded=c1&excluded=c+2"}},
		{"send to user", r.SendToUser("user/1"), Request{"POST", base + "/users/user%2F1/:send?" + v}},
		{"send to group", r.SendToGroup("g 1", "c1"), Request{"POST", base + "/groups/g%201/:send?" + v + "&excluded=c1"}},
		{"send to connection", r.SendToConnection("c1"), Request{"POST", base + "/connections/c1/:send?" + v}},
		{"add to group", r.AddConnectionToGroup("g", "c1"), Request{"PUT", base + "/groups/g/connections/c1?" + v}},
		{"remove from group", r.RemoveConnectionFromGroup("g", "c1"), Request{"DELETE", base + "/groups/g/connections/c1?" + v}},
		{"add user to group", r.AddUserToGroup("u", "g"), Request{"PUT", base + "/users/u/groups/g?" + v}},
		{"connection exists", r.ConnectionExists("c1"), Request{"HEAD", base + "/connections/c1?" + v}},
		{"user exists", r.UserExists("u?x"), Request{"HEAD", base + "/users/u%3Fx?" + v}},
		{"group exists", r.GroupExists("g"), Request{"HEAD", base + "/groups/g?" + v}},
		{"close connection", r.CloseConnection("c1", ""), Request{"DELETE", base + "/connections/c1?" + v}},
		{"close connection with reason", r.CloseConnection("c1", "probe done"), Request{"DELETE", base + "/connections/c1?" + v + "&reason=probe+done"}},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %v\nwant %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestRESTOptions(t *testing.T) {
	r, err := NewREST("http://127.0.0.1:8080/prefix", "Hub_1", "2024-01-01")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.SendToAll().URL; got != "http://127.0.0.1:8080/prefix/api/hubs/Hub_1/:send?api-version=2024-01-01" {
		t.Errorf("URL = %s", got)
	}
}

func TestNewRESTErrors(t *testing.T) {
	for _, tc := range []struct{ endpoint, hub, want string }{
		{"ftp://host", "chat", `webpubsub: endpoint "ftp://host": want http(s)://host[:port] without user, query or fragment`},
		{"https://", "chat", `webpubsub: endpoint "https:": want http(s)://host[:port] without user, query or fragment`},
		{"https://host?x=1", "chat", `webpubsub: endpoint "https://host?x=1": want http(s)://host[:port] without user, query or fragment`},
		{"https://user:secret@host", "chat", `webpubsub: endpoint "https://user:xxxxx@host": want http(s)://host[:port] without user, query or fragment`},
		{"https://host", "1chat", "webpubsub: hub \"1chat\": want a letter then up to 127 letters, digits or _`,.[]"},
		{"https://host", "chat/x", "webpubsub: hub \"chat/x\": want a letter then up to 127 letters, digits or _`,.[]"},
		{"https://host", "c" + strings.Repeat("x", 128), "webpubsub: hub \"c" + strings.Repeat("x", 39) + "\"…: want a letter then up to 127 letters, digits or _`,.[]"},
		{"https://user:secret@host\x7f", "chat", `webpubsub: endpoint is not a URL: net/url: invalid control character in URL`},
	} {
		_, err := NewREST(tc.endpoint, tc.hub, "")
		if err == nil || err.Error() != tc.want {
			t.Errorf("NewREST(%q, %q): error\n got %v\nwant %s", tc.endpoint, tc.hub, err, tc.want)
		}
	}
}
