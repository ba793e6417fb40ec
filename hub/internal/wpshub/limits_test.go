package wpshub

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

func TestWebPubSubQuotaAnswerText(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{ConnectionQuota: 1})
	wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	hc := wiretest.NewHTTPConn(t, srv.Origin()+wiretest.ClientPath+"chat", "")
	hc.Header.Set("Connection", "Upgrade")
	hc.Header.Set("Upgrade", "websocket")
	hc.Header.Set("Sec-WebSocket-Version", "13")
	hc.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	hc.Header.Set("Authorization", "Bearer "+wiretest.WPSToken(t, wiretest.AccessKey, srv.Origin()+wiretest.ClientPath+"chat", "", nil, nil))
	if r := hc.Do(http.MethodGet, nil, ""); r.Status != http.StatusTooManyRequests || r.Body != throttle.ConnectionLimitText {
		t.Fatalf("over quota: %d %q", r.Status, r.Body)
	}
}

func TestWebPubSubMessageRateLimit(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{MessageRateLimit: 1})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
	c.Send(`{"type":"ping"}`) // pings are not counted
	c.NextRaw()
	c.Send(`{"type":"joinGroup","group":"g","ackId":1}`)
	c.ExpectAck(1, "")
	c.Send(`{"type":"sendToGroup","group":"g","ackId":2,"data":1}`)
	c.ExpectDisconnected(throttle.MessageLimitText, websocket.ClosePolicyViolation)
	if got := testutil.ToFloat64(h.Metrics.Throttled.WithLabelValues(throttle.MessageLimit)); got != 1 {
		t.Errorf("throttled{message_limit} = %v, want 1", got)
	}
	if reason, ok := throttle.FromCloseMessage(throttle.MessageLimitText); !ok || reason != throttle.MessageLimit {
		t.Errorf("the disconnected message classifies as %q %v", reason, ok)
	}
}

// A reliable client that never acknowledges gets 1000 messages; the next
// one closes it for good.
func TestWebPubSubUnackedLimit(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{SendQueueSize: 2048})
	lazy := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSONReliable, "lazy")
	diligent := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSONReliable, "diligent")
	api := wiretest.NewRESTAPI(t, srv, "chat")
	for i := 0; i < maxUnacked; i++ {
		api.Expect(api.API.SendToAll(), "text/plain", "m", http.StatusAccepted)
	}
	for i := 1; i <= maxUnacked; i++ {
		for _, c := range []*wiretest.WPSClient{lazy, diligent} {
			if f := c.Next(); f.SequenceID != uint64(i) {
				t.Fatalf("message %d has sequenceId %d", i, f.SequenceID)
			}
		}
		if i%100 == 0 {
			diligent.Send(`{"type":"sequenceAck","sequenceId":` + strconv.Itoa(i) + `}`)
		}
	}
	conn := h.connByID(diligent.Connected.ConnectionID)
	wiretest.WaitFor(t, "the acks", func() bool { return conn.unacked.len() == 0 })
	api.Expect(api.API.SendToAll(), "text/plain", "m", http.StatusAccepted)
	lazy.ExpectDisconnected("did not acknowledge", websocket.ClosePolicyViolation)
	if f := diligent.Next(); f.SequenceID != maxUnacked+1 {
		t.Fatalf("the acknowledging client's message %d: %+v", maxUnacked+1, f)
	}
}

// The hub pings a quiet client and closes one that answers nothing.
func TestWebPubSubKeepAliveAndClientTimeout(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{KeepAliveInterval: 40 * time.Millisecond, ClientTimeout: 300 * time.Millisecond})
	alive := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	pings := make(chan struct{}, 100)
	alive.WS.SetPingHandler(func(data string) error {
		pings <- struct{}{}
		return alive.WS.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	silent := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	silent.WS.SetPingHandler(func(string) error { return nil }) // answers no ping
	go func() { _, _, _ = alive.Read(time.Second) }()           // reads (so answers pings) for 1 s
	silent.ExpectDisconnected("client timeout", websocket.ClosePolicyViolation)
	time.Sleep(200 * time.Millisecond) // alive has outlived the timeout
	if len(pings) < 5 {
		t.Fatalf("alive got %d pings in 0.5 s, want at least 5", len(pings))
	}
}

// Bad bytes end the connection with a disconnected message; the hub itself
// carries on.
func TestWebPubSubBadFrames(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	deep := `{"type":"event","event":"e","data":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`
	for _, tc := range []struct {
		name, frame, want string
		binary            bool
		code              int
	}{
		{"not JSON", "garbage\x00\xff", "Invalid message", false, websocket.ClosePolicyViolation},
		{"unknown type", `{"type":"shout","data":1}`, `unknown frame type "shout"`, false, websocket.ClosePolicyViolation},
		{"a service frame", `{"type":"ack","ackId":1,"success":true}`, "not a client request", false, websocket.ClosePolicyViolation},
		{"missing data", `{"type":"sendToGroup","group":"g"}`, `no "data"`, false, websocket.ClosePolicyViolation},
		{"negative sequenceId", `{"type":"sequenceAck","sequenceId":-1}`, "Invalid message", false, websocket.ClosePolicyViolation},
		{"too deep", deep, "Invalid message", false, websocket.ClosePolicyViolation},
		{"binary frame", `{"type":"ping"}`, "frames are text", true, websocket.CloseUnsupportedData},
		{"over 1 MiB", `{"type":"event","event":"e","dataType":"text","data":"` + strings.Repeat("x", maxMessageSize) + `"}`,
			"maximum size", false, websocket.CloseMessageTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
			kind := websocket.TextMessage
			if tc.binary {
				kind = websocket.BinaryMessage
			}
			if err := c.WS.WriteMessage(kind, []byte(tc.frame)); err != nil {
				t.Fatal(err)
			}
			c.ExpectDisconnected(tc.want, tc.code)
		})
	}
	wiretest.WaitFor(t, "every connection to be gone", func() bool { return testutil.ToFloat64(h.Metrics.Connections) == 0 })
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	c.Send(`{"type":"ping"}`)
	c.NextRaw()
	if got := testutil.ToFloat64(h.Metrics.Panics); got != 0 {
		t.Errorf("panics = %v", got)
	}
}

// A client that stops reading is dropped once its send queue is full,
// rather than growing the hub's memory.
func TestWebPubSubSlowConsumerDropped(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{SendQueueSize: 2})
	slow := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "slow")
	api := wiretest.NewRESTAPI(t, srv, "chat")
	big := strings.Repeat("x", core.MaxRESTBody)
	conn := h.connByID(slow.Connected.ConnectionID)
	for i := 0; i < 200 && !conn.closed.Load(); i++ {
		api.Expect(api.API.SendToUser("slow"), "text/plain", big, http.StatusAccepted)
	}
	if !conn.closed.Load() {
		t.Fatal("200 MiB queued to a client that reads nothing, and it is still open")
	}
	if conn.closeWith != closeSlow {
		t.Fatalf("closed with %+v, want %+v", conn.closeWith, closeSlow)
	}
	wiretest.WaitFor(t, "the slow client to be gone", func() bool { return testutil.ToFloat64(h.Metrics.Connections) == 0 })
}
