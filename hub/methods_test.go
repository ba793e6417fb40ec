package hub

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
)

// An odd but valid payload: the hub must pass these exact bytes through.
const oddPayload = `{ "payload.MessageBlob" : "a\u00e9\"b", "payload.Timestamp":1712345678901 ,"n":[1,{"x":null}] }`

func recordLatencyRecord(payload string) string {
	return `{"type":1,"target":"RecordLatency","arguments":[` + payload + `]}`
}

func TestHandshakeThenOnConnected(t *testing.T) {
	_, srv, _ := startHub(t, Options{})
	n := negotiate(t, srv.URL())
	c := dialRaw(t, wsURL(srv.URL(), n.ConnectionToken))
	c.handshake()
	want := `{"type":1,"target":"OnConnected","arguments":["` + n.ConnectionID + `"]}`
	if got := string(c.nextRecord()); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// pausingLog holds up the first "client connected" line written after
// arm, so a test can act while that connection's reader stands just past
// register, before it writes to its client again.
type pausingLog struct {
	armed   atomic.Bool
	paused  chan struct{} // closed when the line arrives
	release chan struct{} // closed by the test to let the reader go on
}

func (l *pausingLog) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"client connected"`)) && l.armed.CompareAndSwap(true, false) {
		close(l.paused)
		<-l.release
	}
	return len(p), nil
}

// From register on, other connections' fan-out reaches the new
// connection's writer goroutine; none of it may overtake the handshake
// response, which the client takes the first record to be.
func TestHandshakeResponseComesBeforeFanOut(t *testing.T) {
	pause := &pausingLog{paused: make(chan struct{}), release: make(chan struct{})}
	_, srv, _ := startHubWithLogger(t, Options{}, zerolog.New(pause).Level(zerolog.DebugLevel))
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(pause.release) }) }
	t.Cleanup(release) // before the hub closes: Close waits for the reader

	sender := connect(t, srv)
	pause.armed.Store(true)
	late := dialRaw(t, wsURL(srv.URL(), negotiate(t, srv.URL()).ConnectionToken))
	late.sendRaw(`{"protocol":"json","version":1}` + "\x1e")
	select {
	case <-pause.paused:
	case <-time.After(testTimeout):
		t.Fatal("the late connection never registered")
	}
	sender.send(`{"type":1,"target":"Broadcast","arguments":[{"early":1}]}`)
	// The sender's own copy comes after the fan-out to everyone else.
	if got := sender.nextNonPingRecord(); got != recordLatencyRecord(`{"early":1}`) {
		t.Fatalf("sender got %s", got)
	}
	first, err := late.tryNextRecord(testTimeout)
	release()
	if err != nil {
		t.Fatalf("late connection: %v", err)
	}
	if string(first) != "{}" {
		t.Fatalf("late connection's first record = %s, want the handshake response {}", first)
	}
	if m := late.next(); m.Target != "OnConnected" {
		t.Fatalf("late connection's first message = %+v, want OnConnected", m)
	}
	if got := late.nextNonPingRecord(); got != recordLatencyRecord(`{"early":1}`) {
		t.Fatalf("late connection got %s, want the broadcast", got)
	}
}

func TestSkipNegotiationGetsFreshID(t *testing.T) {
	_, srv, _ := startHub(t, Options{})
	c := dialRaw(t, wsURL(srv.URL(), ""))
	c.handshake()
	m := c.next()
	if m.Target != "OnConnected" || len(unquote(t, m.Arguments[0])) != 22 {
		t.Fatalf("got %+v, want OnConnected with a 22-character id", m)
	}
}

func TestEchoPassesPayloadThroughUntouched(t *testing.T) {
	_, srv, _ := startHub(t, Options{})
	c := connect(t, srv)
	c.send(`{"type":1,"invocationId":"7","target":"echo","arguments":[` + oddPayload + `]}`)
	if got, want := c.nextNonPingRecord(), recordLatencyRecord(oddPayload); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got, want := c.nextNonPingRecord(), `{"type":3,"invocationId":"7"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	// Without an invocationId there is no Completion: the next message is
	// the second echo.
	c.send(`{"type":1,"target":"Echo","arguments":[{"i":1}]}`)
	c.send(`{"type":1,"target":"ECHO","arguments":[{"i":2}]}`)
	for i := 1; i <= 2; i++ {
		if got, want := c.nextNonPingRecord(), recordLatencyRecord(fmt.Sprintf(`{"i":%d}`, i)); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
}

func TestBroadcastReachesEveryConnection(t *testing.T) {
	h, srv, _ := startHub(t, Options{})
	const n = 5
	clients := make([]*rawClient, n)
	for i := range clients {
		clients[i] = connect(t, srv)
	}
	clients[2].send(`{"type":1,"target":"Broadcast","arguments":[` + oddPayload + `]}`)
	for i, c := range clients {
		if got := c.nextNonPingRecord(); got != recordLatencyRecord(oddPayload) {
			t.Fatalf("client %d got %s", i, got)
		}
	}
	// n OnConnected + n RecordLatency sent; 1 invocation received. The
	// counter moves once a write returns, which can trail the client's read.
	deadline := time.Now().Add(2 * time.Second)
	for testutil.ToFloat64(h.metrics.sent) < 2*n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := testutil.ToFloat64(h.metrics.sent); got != 2*n {
		t.Errorf("messages sent = %v, want %d", got, 2*n)
	}
	if got := testutil.ToFloat64(h.metrics.received); got != 1 {
		t.Errorf("messages received = %v, want 1", got)
	}
	// With an invocationId the sender gets its copy before the Completion.
	clients[0].send(`{"type":1,"invocationId":"b","target":"broadcast","arguments":[{"second":2}]}`)
	if got := clients[0].nextNonPingRecord(); got != recordLatencyRecord(`{"second":2}`) {
		t.Fatalf("sender got %s first", got)
	}
	if got := clients[0].nextNonPingRecord(); got != `{"type":3,"invocationId":"b"}` {
		t.Fatalf("sender got %s, want the Completion", got)
	}
	for _, c := range clients[1:] {
		if got := c.nextNonPingRecord(); got != recordLatencyRecord(`{"second":2}`) {
			t.Fatalf("receiver got %s", got)
		}
	}
	if got := testutil.ToFloat64(h.metrics.connections); got != n {
		t.Errorf("connections = %v, want %d", got, n)
	}
}

func TestSendToClientReachesOnlyThatConnection(t *testing.T) {
	_, srv, _ := startHub(t, Options{})
	a, b := connect(t, srv), connect(t, srv)
	payload := `{"information.ConnectionId":"` + b.id + `","payload.Timestamp":1}`
	a.send(`{"type":1,"invocationId":"1","target":"SendToClient","arguments":[` + payload + `]}`)
	if got := b.nextNonPingRecord(); got != recordLatencyRecord(payload) {
		t.Fatalf("b got %s", got)
	}
	if got := a.nextNonPingRecord(); got != `{"type":3,"invocationId":"1"}` {
		t.Fatalf("a got %s, want only its Completion", got)
	}
	// An unknown connection id is not an error, as in ASP.NET.
	a.send(`{"type":1,"invocationId":"2","target":"SendToClient","arguments":[{"information.ConnectionId":"nobody"}]}`)
	if got := a.nextNonPingRecord(); got != `{"type":3,"invocationId":"2"}` {
		t.Fatalf("a got %s", got)
	}
}

func TestGroups(t *testing.T) {
	h, srv, _ := startHub(t, Options{})
	a, b, outsider := connect(t, srv), connect(t, srv), connect(t, srv)
	for _, c := range []*rawClient{a, b} {
		c.send(`{"type":1,"invocationId":"j","target":"JoinGroup","arguments":["g1","extra",3]}`)
		if got := c.nextNonPingRecord(); got != `{"type":1,"target":"JoinGroup","arguments":[]}` {
			t.Fatalf("join callback = %s", got)
		}
		if got := c.nextNonPingRecord(); got != `{"type":3,"invocationId":"j"}` {
			t.Fatalf("join completion = %s", got)
		}
	}
	payload := `{"information.GroupName":"g1","payload.Timestamp":5}`
	outsider.send(`{"type":1,"target":"SendToGroup","arguments":[` + payload + `]}`)
	for _, c := range []*rawClient{a, b} {
		if got := c.nextNonPingRecord(); got != recordLatencyRecord(payload) {
			t.Fatalf("member got %s", got)
		}
	}
	b.send(`{"type":1,"target":"leavegroup","arguments":["g1"]}`)
	if got := b.nextNonPingRecord(); got != `{"type":1,"target":"LeaveGroup","arguments":[]}` {
		t.Fatalf("leave callback = %s", got)
	}
	outsider.send(`{"type":1,"target":"SendToGroup","arguments":[` + payload + `]}`)
	if got := a.nextNonPingRecord(); got != recordLatencyRecord(payload) {
		t.Fatalf("a got %s", got)
	}
	// Neither b nor the outsider got a group message: their next message is
	// their own echo.
	for _, c := range []*rawClient{b, outsider} {
		c.send(`{"type":1,"target":"Echo","arguments":[{"own":true}]}`)
		if got := c.nextNonPingRecord(); got != recordLatencyRecord(`{"own":true}`) {
			t.Fatalf("non-member got %s", got)
		}
	}
	a.ws.Close()
	waitFor(t, "the empty group to be dropped", func() bool {
		h.mu.RLock()
		defer h.mu.RUnlock()
		return len(h.home.groups) == 0
	})
}

func TestConnectionIDMethods(t *testing.T) {
	_, srv, _ := startHub(t, Options{})
	c := connect(t, srv)
	c.send(`{"type":1,"target":"ConnectionId","arguments":[]}`)
	if got, want := c.nextNonPingRecord(), `{"type":1,"target":"ConnectionId","arguments":["`+c.id+`"]}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	c.send(`{"type":1,"invocationId":"9","target":"getconnectionid","arguments":[]}`)
	if got, want := c.nextNonPingRecord(), `{"type":3,"invocationId":"9","result":"`+c.id+`"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestInvocationErrors(t *testing.T) {
	_, srv, _ := startHub(t, Options{})
	c := connect(t, srv)
	cases := []struct{ send, want string }{
		{`{"type":1,"invocationId":"1","target":"Nope","arguments":[]}`,
			`{"type":3,"invocationId":"1","error":"Unknown hub method 'Nope'"}`},
		{`{"type":1,"invocationId":"2","target":"Echo","arguments":[]}`,
			`{"type":3,"invocationId":"2","error":"Failed to invoke 'Echo' due to an error on the server: expected 1 argument, got 0."}`},
		{`{"type":1,"invocationId":"3","target":"Echo","arguments":["text"]}`,
			`{"type":3,"invocationId":"3","error":"Failed to invoke 'Echo' due to an error on the server: the argument is not an object."}`},
		{`{"type":1,"invocationId":"4","target":"SendToGroup","arguments":[{"g":1}]}`,
			`{"type":3,"invocationId":"4","error":"Failed to invoke 'SendToGroup' due to an error on the server: the payload has no string \"information.GroupName\"."}`},
		{`{"type":1,"invocationId":"5","target":"JoinGroup","arguments":[7]}`,
			`{"type":3,"invocationId":"5","error":"Failed to invoke 'JoinGroup' due to an error on the server: the group name is not a string."}`},
		{`{"type":1,"invocationId":"6","target":"StreamingEcho","arguments":[0],"streamIds":["s"]}`,
			`{"type":3,"invocationId":"6","error":"The client attempted to invoke the streaming 'StreamingEcho' method with a non-streaming invocation."}`},
		{`{"type":4,"invocationId":"7","target":"Echo","arguments":[{}]}`,
			`{"type":3,"invocationId":"7","error":"The client attempted to invoke the non-streaming 'Echo' method with a streaming invocation."}`},
	}
	for _, tc := range cases {
		c.send(tc.send)
		if got := c.nextNonPingRecord(); got != tc.want {
			t.Errorf("sent %s\n got %s\nwant %s", tc.send, got, tc.want)
		}
	}
	// Failures without an invocationId are silent; the connection lives on.
	c.send(`{"type":1,"target":"Nope","arguments":[]}`)
	c.send(`{"type":1,"target":"Echo","arguments":[{"alive":1}]}`)
	if got := c.nextNonPingRecord(); got != recordLatencyRecord(`{"alive":1}`) {
		t.Fatalf("got %s", got)
	}
}

func TestStreamingEcho(t *testing.T) {
	_, srv, _ := startHub(t, Options{})
	c := connect(t, srv)
	c.send(`{"type":4,"invocationId":"s1","target":"StreamingEcho","arguments":[1],"streamIds":["x"]}`)
	items := []string{`{"k":1}`, `{"k":"two"}`, `{"k":[3]}`}
	for _, it := range items {
		c.send(`{"type":2,"invocationId":"x","item":` + it + `}`)
	}
	c.send(`{"type":3,"invocationId":"x"}`)
	for _, it := range items {
		if got, want := c.nextNonPingRecord(), `{"type":2,"invocationId":"s1","item":`+it+`}`; got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	if got := c.nextNonPingRecord(); got != `{"type":3,"invocationId":"s1"}` {
		t.Fatalf("got %s, want the stream's Completion", got)
	}
}

func TestStreamingEchoCancel(t *testing.T) {
	_, srv, _ := startHub(t, Options{})
	c := connect(t, srv)
	// A long pause after the first item leaves the stream waiting when the
	// cancel arrives.
	c.send(`{"type":4,"invocationId":"s2","target":"streamingecho","arguments":[60000],"streamIds":["y"]}`)
	c.send(`{"type":2,"invocationId":"y","item":{"k":1}}`)
	if got := c.nextNonPingRecord(); got != `{"type":2,"invocationId":"s2","item":{"k":1}}` {
		t.Fatalf("got %s", got)
	}
	start := time.Now()
	c.send(`{"type":5,"invocationId":"s2"}`)
	if got := c.nextNonPingRecord(); got != `{"type":3,"invocationId":"s2"}` {
		t.Fatalf("got %s, want the Completion of the cancelled stream", got)
	}
	if waited := time.Since(start); waited > testTimeout {
		t.Fatalf("cancel took %v", waited)
	}
	// Items for the cancelled stream are ignored.
	c.send(`{"type":2,"invocationId":"y","item":{"k":2}}`)
	c.send(`{"type":1,"target":"Echo","arguments":[{"after":1}]}`)
	if got := c.nextNonPingRecord(); got != recordLatencyRecord(`{"after":1}`) {
		t.Fatalf("got %s", got)
	}
}

func TestStreamingEchoUploadError(t *testing.T) {
	_, srv, _ := startHub(t, Options{})
	c := connect(t, srv)
	c.send(`{"type":4,"invocationId":"s3","target":"StreamingEcho","arguments":[0],"streamIds":["z"]}`)
	c.send(`{"type":3,"invocationId":"z","error":"boom"}`)
	want := `{"type":3,"invocationId":"s3","error":"The client's stream ended with an error: boom"}`
	if got := c.nextNonPingRecord(); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestDeliveryDelay(t *testing.T) {
	h, srv, _ := startHub(t, Options{})
	c := connect(t, srv)
	const delay = 300 * time.Millisecond
	h.SetDeliveryDelay(delay)
	start := time.Now()
	c.send(`{"type":1,"invocationId":"1","target":"Echo","arguments":[{"slow":1}]}`)
	// The hub method returns at once; only the delivery waits.
	if got := c.nextNonPingRecord(); got != `{"type":3,"invocationId":"1"}` {
		t.Fatalf("got %s, want the Completion first", got)
	}
	if got := c.nextNonPingRecord(); got != recordLatencyRecord(`{"slow":1}`) {
		t.Fatalf("got %s", got)
	}
	if waited := time.Since(start); waited < delay {
		t.Fatalf("RecordLatency came after %v, want at least %v", waited, delay)
	}
	h.SetDeliveryDelay(0)
	if n := h.delayed.len(); n != 0 {
		t.Fatalf("%d deliveries still delayed", n)
	}
}

func TestDeliveryDelayAppliesToStreams(t *testing.T) {
	h, srv, _ := startHub(t, Options{DeliveryDelay: 200 * time.Millisecond})
	c := connect(t, srv)
	start := time.Now()
	c.send(`{"type":4,"invocationId":"s","target":"StreamingEcho","arguments":[0],"streamIds":["u"]}`)
	c.send(`{"type":2,"invocationId":"u","item":{"k":1}}`)
	c.send(`{"type":3,"invocationId":"u"}`)
	if got := c.nextNonPingRecord(); got != `{"type":2,"invocationId":"s","item":{"k":1}}` {
		t.Fatalf("got %s", got)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Fatalf("item came back after %v, want at least 200ms", waited)
	}
	if got := c.nextNonPingRecord(); !strings.HasPrefix(got, `{"type":3,"invocationId":"s"`) {
		t.Fatalf("got %s", got)
	}
	_ = h
}
