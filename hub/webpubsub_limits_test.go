package hub

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// The connection quota counts SignalR and Web PubSub connections together.
func TestWebPubSubConnectionQuota(t *testing.T) {
	h, srv, _ := startWPSHub(t, Options{ConnectionQuota: 2})
	connect(t, srv) // a SignalR connection that skipped nothing
	first := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	tok := wpsToken(t, testAccessKey, srv.Origin()+wpsHubPrefix+"chat", "", nil, nil)
	_, resp, err := dialWPS(t, clientURL(srv, "chat"), webpubsub.ProtocolJSON, tok)
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third connection: %v %v, want 429", err, resp)
	}
	if got := testutil.ToFloat64(h.metrics.throttled.WithLabelValues(throttle.ConnectionLimit)); got != 1 {
		t.Errorf("throttled{connection_limit} = %v, want 1", got)
	}
	first.ws.Close()
	waitFor(t, "the quota to free up", func() bool {
		c, _, err := dialWPS(t, clientURL(srv, "chat"), webpubsub.ProtocolJSON, tok)
		if err == nil {
			c.ws.Close()
		}
		return err == nil
	})
}

func TestWebPubSubQuotaAnswerText(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{ConnectionQuota: 1})
	connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	hc := newHTTPConn(t, srv.Origin()+wpsHubPrefix+"chat", "")
	hc.header.Set("Connection", "Upgrade")
	hc.header.Set("Upgrade", "websocket")
	hc.header.Set("Sec-WebSocket-Version", "13")
	hc.header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	hc.header.Set("Authorization", "Bearer "+wpsToken(t, testAccessKey, srv.Origin()+wpsHubPrefix+"chat", "", nil, nil))
	if r := hc.do(http.MethodGet, nil, ""); r.status != http.StatusTooManyRequests || r.body != throttle.ConnectionLimitText {
		t.Fatalf("over quota: %d %q", r.status, r.body)
	}
}

func TestWebPubSubMessageRateLimit(t *testing.T) {
	h, srv, _ := startWPSHub(t, Options{MessageRateLimit: 1})
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
	c.send(`{"type":"ping"}`) // pings are not counted
	c.nextRaw()
	c.send(`{"type":"joinGroup","group":"g","ackId":1}`)
	c.expectAck(1, "")
	c.send(`{"type":"sendToGroup","group":"g","ackId":2,"data":1}`)
	c.expectDisconnected(throttle.MessageLimitText, websocket.ClosePolicyViolation)
	if got := testutil.ToFloat64(h.metrics.throttled.WithLabelValues(throttle.MessageLimit)); got != 1 {
		t.Errorf("throttled{message_limit} = %v, want 1", got)
	}
	if reason, ok := throttle.FromCloseMessage(throttle.MessageLimitText); !ok || reason != throttle.MessageLimit {
		t.Errorf("the disconnected message classifies as %q %v", reason, ok)
	}
}

// A reliable client that never acknowledges gets 1000 messages; the next
// one closes it for good.
func TestWebPubSubUnackedLimit(t *testing.T) {
	h, srv, _ := startWPSHub(t, Options{SendQueueSize: 2048})
	lazy := connectWPS(t, srv, "chat", webpubsub.ProtocolJSONReliable, "lazy")
	diligent := connectWPS(t, srv, "chat", webpubsub.ProtocolJSONReliable, "diligent")
	api := newRESTAPI(t, srv, "chat")
	for i := 0; i < wpsMaxUnacked; i++ {
		api.expect(api.api.SendToAll(), "text/plain", "m", http.StatusAccepted)
	}
	for i := 1; i <= wpsMaxUnacked; i++ {
		for _, c := range []*wpsClient{lazy, diligent} {
			if f := c.next(); f.SequenceID != uint64(i) {
				t.Fatalf("message %d has sequenceId %d", i, f.SequenceID)
			}
		}
		if i%100 == 0 {
			diligent.send(`{"type":"sequenceAck","sequenceId":` + strconv.Itoa(i) + `}`)
		}
	}
	conn := wpsConnByID(h, diligent.connected.ConnectionID)
	waitFor(t, "the acks", func() bool { return conn.unacked.len() == 0 })
	api.expect(api.api.SendToAll(), "text/plain", "m", http.StatusAccepted)
	lazy.expectDisconnected("did not acknowledge", websocket.ClosePolicyViolation)
	if f := diligent.next(); f.SequenceID != wpsMaxUnacked+1 {
		t.Fatalf("the acknowledging client's message %d: %+v", wpsMaxUnacked+1, f)
	}
}

// The hub pings a quiet client and closes one that answers nothing.
func TestWebPubSubKeepAliveAndClientTimeout(t *testing.T) {
	_, srv, _ := startWPSHub(t, Options{KeepAliveInterval: 40 * time.Millisecond, ClientTimeout: 300 * time.Millisecond})
	alive := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	pings := make(chan struct{}, 100)
	alive.ws.SetPingHandler(func(data string) error {
		pings <- struct{}{}
		return alive.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	silent := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	silent.ws.SetPingHandler(func(string) error { return nil }) // answers no ping
	go func() { _, _, _ = alive.read(time.Second) }()           // reads (so answers pings) for 1 s
	silent.expectDisconnected("client timeout", websocket.ClosePolicyViolation)
	time.Sleep(200 * time.Millisecond) // alive has outlived the timeout
	if len(pings) < 5 {
		t.Fatalf("alive got %d pings in 0.5 s, want at least 5", len(pings))
	}
}

// Bad bytes end the connection with a disconnected message; the hub itself
// carries on.
func TestWebPubSubBadFrames(t *testing.T) {
	h, srv, _ := startWPSHub(t, Options{})
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
		{"over 1 MiB", `{"type":"event","event":"e","dataType":"text","data":"` + strings.Repeat("x", wpsMaxMessageSize) + `"}`,
			"maximum size", false, websocket.CloseMessageTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "", allRoles...)
			kind := websocket.TextMessage
			if tc.binary {
				kind = websocket.BinaryMessage
			}
			if err := c.ws.WriteMessage(kind, []byte(tc.frame)); err != nil {
				t.Fatal(err)
			}
			c.expectDisconnected(tc.want, tc.code)
		})
	}
	waitFor(t, "every connection to be gone", func() bool { return testutil.ToFloat64(h.metrics.connections) == 0 })
	c := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	c.send(`{"type":"ping"}`)
	c.nextRaw()
	if got := testutil.ToFloat64(h.metrics.panics); got != 0 {
		t.Errorf("panics = %v", got)
	}
}

// A client that stops reading is dropped once its send queue is full,
// rather than growing the hub's memory.
func TestWebPubSubSlowConsumerDropped(t *testing.T) {
	h, srv, _ := startWPSHub(t, Options{SendQueueSize: 2})
	slow := connectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "slow")
	api := newRESTAPI(t, srv, "chat")
	big := strings.Repeat("x", restMaxBody)
	conn := wpsConnByID(h, slow.connected.ConnectionID)
	for i := 0; i < 200 && !conn.closed.Load(); i++ {
		api.expect(api.api.SendToUser("slow"), "text/plain", big, http.StatusAccepted)
	}
	if !conn.closed.Load() {
		t.Fatal("200 MiB queued to a client that reads nothing, and it is still open")
	}
	if conn.closeWith != wpsCloseSlow {
		t.Fatalf("closed with %+v, want %+v", conn.closeWith, wpsCloseSlow)
	}
	waitFor(t, "the slow client to be gone", func() bool { return testutil.ToFloat64(h.metrics.connections) == 0 })
}
