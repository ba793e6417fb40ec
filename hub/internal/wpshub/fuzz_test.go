package wpshub

import (
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// FuzzWebPubSubFrame feeds arbitrary client frames to the hub's frame
// handling (decode, roles, acks, groups, fan-out, events without a
// handler) on a plain and a reliable connection: it must never panic, and
// everything it queues for the client must be a frame the client can decode.
func FuzzWebPubSubFrame(f *testing.F) {
	for _, seed := range []string{
		`{"type":"joinGroup","group":"g","ackId":1}`,
		`{"type":"sendToGroup","group":"g","ackId":2,"noEcho":false,"dataType":"text","data":"hi"}`,
		`{"type":"sendToGroup","group":"g","dataType":"binary","data":"AAE="}`,
		`{"type":"sendToGroup","group":"g","dataType":"json","data":{"a":[1,2,null]}}`,
		`{"type":"event","event":"echo","ackId":3,"dataType":"json","data":1}`,
		`{"type":"leaveGroup","group":"g","ackId":1}`,
		`{"type":"sequenceAck","sequenceId":"5"}`,
		`{"type":"ping"}`,
		`{"type":"ack","ackId":1,"success":true}`,
		`{"type":"joinGroup","group":""}`,
		"\xff\xfe{",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	h := newHub(f, Config{}, core.Config{})
	s, _ := h.spaces.Named("fuzz")
	var conns [2]*conn
	for i, protocol := range []string{webpubsub.ProtocolJSON, webpubsub.ProtocolJSONReliable} {
		conns[i] = newConn(h, nil, protocol, s, clientClaims{UserID: "u", Roles: allRoles}, "127.0.0.1")
		h.register(conns[i], []string{"g"})
	}
	f.Fuzz(func(t *testing.T, frame []byte, reliable bool) {
		c := conns[0]
		if reliable {
			c = conns[1]
		}
		_ = c.handle(false, frame)
		// Both connections are in the group, so fan-out reaches both:
		// drain each, or the other one's queue fills and the hub drops it.
		for _, c := range conns {
			drainDecodable(t, c, frame)
		}
	})
}

// drainDecodable empties c's queue, failing on a frame the client could
// not decode.
func drainDecodable(t *testing.T, c *conn, frame []byte) {
	for {
		select {
		case o := <-c.queue:
			if _, err := webpubsub.Decode(o.b); err != nil {
				t.Fatalf("frame %q made the hub queue %q: %v", frame, o.b, err)
			}
		default:
			return
		}
	}
}

// FuzzWebPubSubRESTRoute checks the REST path matcher on arbitrary paths:
// no panic, and a matched route yields one argument per wildcard.
func FuzzWebPubSubRESTRoute(f *testing.F) {
	for _, seed := range []string{
		"chat/:send", "chat/users/a%20b/:send", "chat/groups/g/connections/c", "chat/permissions/sendToGroup/connections/c",
		"chat/users/u/groups", "chat//:send", "%zz/:send", "",
	} {
		f.Add("POST", seed)
	}
	f.Fuzz(func(t *testing.T, method, tail string) {
		hub, route, args, allow := matchRoute(method, tail)
		if route == nil {
			if hub != "" || args != nil {
				t.Fatalf("no route but hub %q args %q", hub, args)
			}
			return
		}
		if route.method != method || allow != "" {
			t.Fatalf("route %s for method %s (allow %q)", route.method, method, allow)
		}
		if want := strings.Count(strings.Join(route.pattern, "/"), "*"); len(args) != want {
			t.Fatalf("%d args for %v", len(args), route.pattern)
		}
	})
}
