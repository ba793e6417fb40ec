package hub

import (
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// expectAck asserts the next frame acks ackID with success, or with the
// error name when name is not empty.
func (c *wpsClient) expectAck(ackID uint64, name string) webpubsub.Frame {
	c.t.Helper()
	f := c.next()
	switch {
	case f.Kind != webpubsub.KindAck || f.AckID != ackID:
		c.t.Fatalf("got %+v, want the ack of %d", f, ackID)
	case name == "" && !f.Success:
		c.t.Fatalf("ack %d failed: %+v", ackID, f.Error)
	case name != "" && (f.Success || f.Error.Name != name):
		c.t.Fatalf("ack %d = %+v, want error %s", ackID, f, name)
	}
	return f
}

// expectGroupMessage asserts the next frame is text data in group from user.
func (c *wpsClient) expectGroupMessage(group, fromUser, data string) {
	c.t.Helper()
	f := c.next()
	if f.Kind != webpubsub.KindGroupMessage || f.Group != group || f.FromUserID != fromUser ||
		f.DataType != webpubsub.DataTypeText || string(f.Data) != data {
		c.t.Fatalf("got %+v (data %q), want %q from %q in %q", f, f.Data, data, fromUser, group)
	}
}

func TestWebPubSubJoinSendLeave(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	a := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "alice", allRoles...)
	b := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "bob", allRoles...)
	other := connectWPS(t, srv, "other", webpubsub.ProtocolJSON, "carol", allRoles...)
	for _, c := range []*wpsClient{a, b, other} {
		c.send(`{"type":"joinGroup","group":"g1","ackId":1}`)
		c.expectAck(1, "")
	}
	a.send(`{"type":"sendToGroup","group":"g1","ackId":2,"dataType":"text","data":"hello"}`)
	a.expectGroupMessage("g1", "alice", "hello") // the sender is a member and noEcho is off
	a.expectAck(2, "")
	b.expectGroupMessage("g1", "alice", "hello")

	// noEcho: b gets it, a does not (a's next frame is the ack).
	a.send(`{"type":"sendToGroup","group":"g1","ackId":3,"noEcho":true,"dataType":"text","data":"quiet"}`)
	a.expectAck(3, "")
	b.expectGroupMessage("g1", "alice", "quiet")

	b.send(`{"type":"leaveGroup","group":"g1","ackId":10}`)
	b.expectAck(10, "")
	a.send(`{"type":"sendToGroup","group":"g1","ackId":4,"dataType":"text","data":"after"}`)
	a.expectGroupMessage("g1", "alice", "after")
	a.expectAck(4, "")

	// b left and "other" is another hub of the same group name: the next
	// thing each gets is what they themselves send.
	b.send(`{"type":"joinGroup","group":"g2","ackId":2}`)
	b.expectAck(2, "")
	other.send(`{"type":"sendToGroup","group":"g1","dataType":"text","data":"own hub"}`)
	other.expectGroupMessage("g1", "carol", "own hub")
	b.send(`{"type":"sendToGroup","group":"g2","dataType":"text","data":"mine"}`)
	b.expectGroupMessage("g2", "bob", "mine")
}

// A sender need not be a member of the group it sends to.
func TestWebPubSubSendToGroupFromOutside(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	member := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
	outsider := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", roleSendToGroup)
	member.send(`{"type":"joinGroup","group":"g","ackId":1}`)
	member.expectAck(1, "")
	outsider.send(`{"type":"sendToGroup","group":"g","ackId":1,"dataType":"json","data":{"n":1}}`)
	outsider.expectAck(1, "")
	f := member.next()
	if f.Kind != webpubsub.KindGroupMessage || f.DataType != webpubsub.DataTypeJSON || string(f.Data) != `{"n":1}` || f.FromUserID != "" {
		t.Fatalf("got %+v (data %s), want the JSON from an anonymous sender", f, f.Data)
	}
}

func TestWebPubSubDataTypesRoundTrip(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
	c.send(`{"type":"joinGroup","group":"g"}`)
	for _, frame := range []string{
		`{"type":"sendToGroup","group":"g","dataType":"text","data":"t\u00e9xt \"q\""}`,
		`{"type":"sendToGroup","group":"g","dataType":"json","data":[1,"two",{"three":null}]}`,
		`{"type":"sendToGroup","group":"g","dataType":"binary","data":"AAEC/w=="}`,
		`{"type":"sendToGroup","group":"g","data":"json is the default"}`,
	} {
		c.send(frame)
	}
	want := []string{
		`{"type":"message","from":"group","group":"g","dataType":"text","data":"téxt \"q\""}`,
		`{"type":"message","from":"group","group":"g","dataType":"json","data":[1,"two",{"three":null}]}`,
		`{"type":"message","from":"group","group":"g","dataType":"binary","data":"AAEC/w=="}`,
		`{"type":"message","from":"group","group":"g","dataType":"json","data":"json is the default"}`,
	}
	for _, w := range want {
		if got := c.nextRaw(); got != w {
			t.Errorf("got  %s\nwant %s", got, w)
		}
	}
}

func TestWebPubSubRolesEnforced(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	none := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	none.send(`{"type":"joinGroup","group":"g","ackId":1}`)
	if f := none.expectAck(1, webpubsub.ErrorForbidden); f.Error.Message == "" {
		t.Error("Forbidden ack without a message")
	}
	none.send(`{"type":"sendToGroup","group":"g","ackId":2,"data":1}`)
	none.expectAck(2, webpubsub.ErrorForbidden)

	scoped := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", roleJoinLeaveGroup+".g1", roleSendToGroup+".g1")
	for i, tc := range []struct{ frame, errName string }{
		{`{"type":"joinGroup","group":"g1","ackId":1}`, ""},
		{`{"type":"joinGroup","group":"g2","ackId":2}`, webpubsub.ErrorForbidden},
		{`{"type":"leaveGroup","group":"g2","ackId":3}`, webpubsub.ErrorForbidden},
		{`{"type":"sendToGroup","group":"g2","ackId":4,"data":1}`, webpubsub.ErrorForbidden},
		{`{"type":"joinGroup","group":"","ackId":5}`, wpsErrorBadRequest},
	} {
		scoped.send(tc.frame)
		scoped.expectAck(uint64(i+1), tc.errName)
	}
	scoped.send(`{"type":"sendToGroup","group":"g1","ackId":6,"dataType":"text","data":"ok"}`)
	scoped.expectGroupMessage("g1", "", "ok")
	scoped.expectAck(6, "")

	// Without an ackId a refused request ends the connection, as the
	// service does.
	none.send(`{"type":"joinGroup","group":"g"}`)
	none.expectDisconnected("no permission", websocket.ClosePolicyViolation)
}

func TestWebPubSubDuplicateAckID(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
	c.send(`{"type":"joinGroup","group":"g","ackId":7}`)
	c.expectAck(7, "")
	c.send(`{"type":"sendToGroup","group":"g","ackId":7,"dataType":"text","data":"again"}`)
	if f := c.expectAck(7, webpubsub.ErrorDuplicate); f.Error.Message != "Message with ack-id: 7 has been processed" {
		t.Errorf("Duplicate message = %q", f.Error.Message)
	}
	// The duplicate was not sent: the next frame is the next request's.
	c.send(`{"type":"sendToGroup","group":"g","ackId":8,"dataType":"text","data":"new"}`)
	c.expectGroupMessage("g", "", "new")
	c.expectAck(8, "")
}

// Groups the token names are joined on connect.
func TestWebPubSubTokenGroups(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{})
	tok := wpsToken(t, testAccessKey, srv.Origin()+wpsHubPrefix+"chat", "", allRoles, []string{"early", ""})
	c, _, err := dialWPS(t, clientURL(srv, "chat"), webpubsub.ProtocolJSON, tok)
	if err != nil {
		t.Fatal(err)
	}
	c.next() // connected
	c.send(`{"type":"sendToGroup","group":"early","dataType":"text","data":"hi"}`)
	c.expectGroupMessage("early", "", "hi")
	r := request(t, "HEAD", srv.Origin()+"/api/hubs/chat/groups/early?api-version="+webpubsub.APIVersion,
		restToken(t, testAccessKey, srv.Origin()+"/api/hubs/chat/groups/early"), "")
	if r.status != 200 {
		t.Errorf("group exists = %d, want 200", r.status)
	}
}

func TestWebPubSubReliableSequenceIDs(t *testing.T) {
	h, srv, _ := startWPSHub(t, Options{})
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSONReliable, "", allRoles...)
	c.send(`{"type":"joinGroup","group":"g","ackId":1}`)
	if got := c.nextRaw(); got != `{"type":"ack","ackId":1,"success":true}` {
		t.Fatalf("ack = %s: acks carry no sequenceId", got)
	}
	for i := 1; i <= 3; i++ {
		c.send(`{"type":"sendToGroup","group":"g","dataType":"text","data":"m"}`)
		want := `{"sequenceId":` + string(rune('0'+i)) + `,"type":"message","from":"group","group":"g","dataType":"text","data":"m"}`
		if got := c.nextRaw(); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
	conn := wpsConnByID(h, c.connected.ConnectionID)
	if n := conn.unacked.len(); n != 3 {
		t.Fatalf("unacked = %d, want 3", n)
	}
	c.send(`{"type":"sequenceAck","sequenceId":2}`)
	waitFor(t, "the ack of 1 and 2", func() bool { return conn.unacked.len() == 1 })
	c.send(`{"type":"sequenceAck","sequenceId":"3"}`) // the reference page's string form
	waitFor(t, "the ack of 3", func() bool { return conn.unacked.len() == 0 })
}

// wpsConnByID finds a registered Web PubSub connection of any hub name.
func wpsConnByID(h *Hub, id string) *wpsConn {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, s := range h.wps.spaces {
		if c := s.conns[id]; c != nil {
			return c
		}
	}
	return nil
}

// Slow mode holds Web PubSub messages back like SignalR ones; acks are not
// held.
func TestWebPubSubSlowMode(t *testing.T) {
	h, srv, _ := startWPSHub(t, Options{})
	h.SetDeliveryDelay(300 * time.Millisecond)
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
	c.send(`{"type":"joinGroup","group":"g","ackId":1}`)
	c.expectAck(1, "")
	start := time.Now()
	c.send(`{"type":"sendToGroup","group":"g","ackId":2,"dataType":"text","data":"slow"}`)
	c.expectAck(2, "")
	if d := time.Since(start); d >= 300*time.Millisecond {
		t.Errorf("the ack took %v: acks are not delayed", d)
	}
	c.expectGroupMessage("g", "", "slow")
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("the message came after %v, want at least the 300ms delay", d)
	}
}
