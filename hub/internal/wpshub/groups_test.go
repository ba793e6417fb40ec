package wpshub

import (
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/webpubsub"
)

func TestWebPubSubJoinSendLeave(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	a := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "alice", allRoles...)
	b := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "bob", allRoles...)
	other := wiretest.ConnectWPS(t, srv, "other", webpubsub.ProtocolJSON, "carol", allRoles...)
	for _, c := range []*wiretest.WPSClient{a, b, other} {
		c.Send(`{"type":"joinGroup","group":"g1","ackId":1}`)
		c.ExpectAck(1, "")
	}
	a.Send(`{"type":"sendToGroup","group":"g1","ackId":2,"dataType":"text","data":"hello"}`)
	a.ExpectGroupMessage("g1", "alice", "hello") // the sender is a member and noEcho is off
	a.ExpectAck(2, "")
	b.ExpectGroupMessage("g1", "alice", "hello")

	// noEcho: b gets it, a does not (a's next frame is the ack).
	a.Send(`{"type":"sendToGroup","group":"g1","ackId":3,"noEcho":true,"dataType":"text","data":"quiet"}`)
	a.ExpectAck(3, "")
	b.ExpectGroupMessage("g1", "alice", "quiet")

	b.Send(`{"type":"leaveGroup","group":"g1","ackId":10}`)
	b.ExpectAck(10, "")
	a.Send(`{"type":"sendToGroup","group":"g1","ackId":4,"dataType":"text","data":"after"}`)
	a.ExpectGroupMessage("g1", "alice", "after")
	a.ExpectAck(4, "")

	// b left and "other" is another hub of the same group name: the next
	// thing each gets is what they themselves send.
	b.Send(`{"type":"joinGroup","group":"g2","ackId":2}`)
	b.ExpectAck(2, "")
	other.Send(`{"type":"sendToGroup","group":"g1","dataType":"text","data":"own hub"}`)
	other.ExpectGroupMessage("g1", "carol", "own hub")
	b.Send(`{"type":"sendToGroup","group":"g2","dataType":"text","data":"mine"}`)
	b.ExpectGroupMessage("g2", "bob", "mine")
}

// A sender need not be a member of the group it sends to.
func TestWebPubSubSendToGroupFromOutside(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	member := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
	outsider := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", roleSendToGroup)
	member.Send(`{"type":"joinGroup","group":"g","ackId":1}`)
	member.ExpectAck(1, "")
	outsider.Send(`{"type":"sendToGroup","group":"g","ackId":1,"dataType":"json","data":{"n":1}}`)
	outsider.ExpectAck(1, "")
	f := member.Next()
	if f.Kind != webpubsub.KindGroupMessage || f.DataType != webpubsub.DataTypeJSON || string(f.Data) != `{"n":1}` || f.FromUserID != "" {
		t.Fatalf("got %+v (data %s), want the JSON from an anonymous sender", f, f.Data)
	}
}

func TestWebPubSubDataTypesRoundTrip(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
	c.Send(`{"type":"joinGroup","group":"g"}`)
	for _, frame := range []string{
		`{"type":"sendToGroup","group":"g","dataType":"text","data":"t\u00e9xt \"q\""}`,
		`{"type":"sendToGroup","group":"g","dataType":"json","data":[1,"two",{"three":null}]}`,
		`{"type":"sendToGroup","group":"g","dataType":"binary","data":"AAEC/w=="}`,
		`{"type":"sendToGroup","group":"g","data":"json is the default"}`,
	} {
		c.Send(frame)
	}
	want := []string{
		`{"type":"message","from":"group","group":"g","dataType":"text","data":"téxt \"q\""}`,
		`{"type":"message","from":"group","group":"g","dataType":"json","data":[1,"two",{"three":null}]}`,
		`{"type":"message","from":"group","group":"g","dataType":"binary","data":"AAEC/w=="}`,
		`{"type":"message","from":"group","group":"g","dataType":"json","data":"json is the default"}`,
	}
	for _, w := range want {
		if got := c.NextRaw(); got != w {
			t.Errorf("got  %s\nwant %s", got, w)
		}
	}
}

func TestWebPubSubRolesEnforced(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	none := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	none.Send(`{"type":"joinGroup","group":"g","ackId":1}`)
	if f := none.ExpectAck(1, webpubsub.ErrorForbidden); f.Error.Message == "" {
		t.Error("Forbidden ack without a message")
	}
	none.Send(`{"type":"sendToGroup","group":"g","ackId":2,"data":1}`)
	none.ExpectAck(2, webpubsub.ErrorForbidden)

	scoped := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", roleJoinLeaveGroup+".g1", roleSendToGroup+".g1")
	for i, tc := range []struct{ frame, errName string }{
		{`{"type":"joinGroup","group":"g1","ackId":1}`, ""},
		{`{"type":"joinGroup","group":"g2","ackId":2}`, webpubsub.ErrorForbidden},
		{`{"type":"leaveGroup","group":"g2","ackId":3}`, webpubsub.ErrorForbidden},
		{`{"type":"sendToGroup","group":"g2","ackId":4,"data":1}`, webpubsub.ErrorForbidden},
		{`{"type":"joinGroup","group":"","ackId":5}`, errorBadRequest},
	} {
		scoped.Send(tc.frame)
		scoped.ExpectAck(uint64(i+1), tc.errName)
	}
	scoped.Send(`{"type":"sendToGroup","group":"g1","ackId":6,"dataType":"text","data":"ok"}`)
	scoped.ExpectGroupMessage("g1", "", "ok")
	scoped.ExpectAck(6, "")

	// Without an ackId a refused request ends the connection, as the
	// service does.
	none.Send(`{"type":"joinGroup","group":"g"}`)
	none.ExpectDisconnected("no permission", websocket.ClosePolicyViolation)
}

func TestWebPubSubDuplicateAckID(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
	c.Send(`{"type":"joinGroup","group":"g","ackId":7}`)
	c.ExpectAck(7, "")
	c.Send(`{"type":"sendToGroup","group":"g","ackId":7,"dataType":"text","data":"again"}`)
	if f := c.ExpectAck(7, webpubsub.ErrorDuplicate); f.Error.Message != "Message with ack-id: 7 has been processed" {
		t.Errorf("Duplicate message = %q", f.Error.Message)
	}
	// The duplicate was not sent: the next frame is the next request's.
	c.Send(`{"type":"sendToGroup","group":"g","ackId":8,"dataType":"text","data":"new"}`)
	c.ExpectGroupMessage("g", "", "new")
	c.ExpectAck(8, "")
}

// Groups the token names are joined on connect.
func TestWebPubSubTokenGroups(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	tok := wiretest.WPSToken(t, wiretest.AccessKey, srv.Origin()+wiretest.ClientPath+"chat", "", allRoles, []string{"early", ""})
	c, _, err := wiretest.DialWPS(t, wiretest.ClientURL(srv, "chat"), webpubsub.ProtocolJSON, tok)
	if err != nil {
		t.Fatal(err)
	}
	c.Next() // connected
	c.Send(`{"type":"sendToGroup","group":"early","dataType":"text","data":"hi"}`)
	c.ExpectGroupMessage("early", "", "hi")
	r := wiretest.Request(t, "HEAD", srv.Origin()+"/api/hubs/chat/groups/early?api-version="+webpubsub.APIVersion,
		wiretest.RESTToken(t, wiretest.AccessKey, srv.Origin()+"/api/hubs/chat/groups/early"), "")
	if r.Status != 200 {
		t.Errorf("group exists = %d, want 200", r.Status)
	}
}

func TestWebPubSubReliableSequenceIDs(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSONReliable, "", allRoles...)
	c.Send(`{"type":"joinGroup","group":"g","ackId":1}`)
	if got := c.NextRaw(); got != `{"type":"ack","ackId":1,"success":true}` {
		t.Fatalf("ack = %s: acks carry no sequenceId", got)
	}
	for i := 1; i <= 3; i++ {
		c.Send(`{"type":"sendToGroup","group":"g","dataType":"text","data":"m"}`)
		want := `{"sequenceId":` + string(rune('0'+i)) + `,"type":"message","from":"group","group":"g","dataType":"text","data":"m"}`
		if got := c.NextRaw(); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
	conn := h.connByID(c.Connected.ConnectionID)
	if n := conn.unacked.len(); n != 3 {
		t.Fatalf("unacked = %d, want 3", n)
	}
	c.Send(`{"type":"sequenceAck","sequenceId":2}`)
	wiretest.WaitFor(t, "the ack of 1 and 2", func() bool { return conn.unacked.len() == 1 })
	c.Send(`{"type":"sequenceAck","sequenceId":"3"}`) // the reference page's string form
	wiretest.WaitFor(t, "the ack of 3", func() bool { return conn.unacked.len() == 0 })
}

// Slow mode holds Web PubSub messages back like SignalR ones; acks are not
// held.
func TestWebPubSubSlowMode(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	h.SetDeliveryDelay(300 * time.Millisecond)
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
	c.Send(`{"type":"joinGroup","group":"g","ackId":1}`)
	c.ExpectAck(1, "")
	start := time.Now()
	c.Send(`{"type":"sendToGroup","group":"g","ackId":2,"dataType":"text","data":"slow"}`)
	c.ExpectAck(2, "")
	if d := time.Since(start); d >= 300*time.Millisecond {
		t.Errorf("the ack took %v: acks are not delayed", d)
	}
	c.ExpectGroupMessage("g", "", "slow")
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("the message came after %v, want at least the 300ms delay", d)
	}
}
