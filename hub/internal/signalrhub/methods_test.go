package signalrhub

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
)

// An odd but valid payload: the hub must pass these exact bytes through.
const oddPayload = `{ "payload.MessageBlob" : "a\u00e9\"b", "payload.Timestamp":1712345678901 ,"n":[1,{"x":null}] }`

func recordLatencyRecord(payload string) string {
	return `{"type":1,"target":"RecordLatency","arguments":[` + payload + `]}`
}

func TestHandshakeThenOnConnected(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	n := wiretest.Negotiate(t, srv.URL())
	c := wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), n.ConnectionToken))
	c.Handshake()
	want := `{"type":1,"target":"OnConnected","arguments":["` + n.ConnectionID + `"]}`
	if got := string(c.NextRecord()); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// pausingLog holds up the first "client connected" line written after
// arm, so a test can act while that connection's reader stands just past
// register, before it writes to its client again.
type pausingLog struct {
	seen    atomic.Int32 // "client connected" lines so far
	armed   atomic.Bool
	paused  chan struct{} // closed when the line arrives
	release chan struct{} // closed by the test to let the reader go on
}

func (l *pausingLog) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte(`"client connected"`)) {
		return len(p), nil
	}
	l.seen.Add(1)
	if l.armed.CompareAndSwap(true, false) {
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
	_, srv, _ := startHubWithLogger(t, Config{}, core.Config{Logger: zerolog.New(pause).Level(zerolog.DebugLevel)})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(pause.release) }) }
	t.Cleanup(release) // before the hub closes: Close waits for the reader

	sender := wiretest.Connect(t, srv)
	// The sender's client reads OnConnected before the hub logs the line:
	// arm only once that line is past, so the pause holds the late one.
	wiretest.WaitFor(t, "the sender's connected line", func() bool { return pause.seen.Load() == 1 })
	pause.armed.Store(true)
	late := wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), wiretest.Negotiate(t, srv.URL()).ConnectionToken))
	late.SendRaw(`{"protocol":"json","version":1}` + "\x1e")
	select {
	case <-pause.paused:
	case <-time.After(wiretest.Timeout):
		t.Fatal("the late connection never registered")
	}
	sender.Send(`{"type":1,"target":"Broadcast","arguments":[{"early":1}]}`)
	// The sender's own copy comes after the fan-out to everyone else.
	if got := sender.NextNonPingRecord(); got != recordLatencyRecord(`{"early":1}`) {
		t.Fatalf("sender got %s", got)
	}
	first, err := late.TryNextRecord(wiretest.Timeout)
	release()
	if err != nil {
		t.Fatalf("late connection: %v", err)
	}
	if string(first) != "{}" {
		t.Fatalf("late connection's first record = %s, want the handshake response {}", first)
	}
	if m := late.Next(); m.Target != "OnConnected" {
		t.Fatalf("late connection's first message = %+v, want OnConnected", m)
	}
	if got := late.NextNonPingRecord(); got != recordLatencyRecord(`{"early":1}`) {
		t.Fatalf("late connection got %s, want the broadcast", got)
	}
}

func TestSkipNegotiationGetsFreshID(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), ""))
	c.Handshake()
	m := c.Next()
	if m.Target != "OnConnected" || len(wiretest.Unquote(t, m.Arguments[0])) != 22 {
		t.Fatalf("got %+v, want OnConnected with a 22-character id", m)
	}
}

func TestEchoPassesPayloadThroughUntouched(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	c.Send(`{"type":1,"invocationId":"7","target":"echo","arguments":[` + oddPayload + `]}`)
	if got, want := c.NextNonPingRecord(), recordLatencyRecord(oddPayload); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got, want := c.NextNonPingRecord(), `{"type":3,"invocationId":"7"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	// Without an invocationId there is no Completion: the next message is
	// the second echo.
	c.Send(`{"type":1,"target":"Echo","arguments":[{"i":1}]}`)
	c.Send(`{"type":1,"target":"ECHO","arguments":[{"i":2}]}`)
	for i := 1; i <= 2; i++ {
		if got, want := c.NextNonPingRecord(), recordLatencyRecord(fmt.Sprintf(`{"i":%d}`, i)); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
}

func TestBroadcastReachesEveryConnection(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	const n = 5
	clients := make([]*wiretest.RawClient, n)
	for i := range clients {
		clients[i] = wiretest.Connect(t, srv)
	}
	clients[2].Send(`{"type":1,"target":"Broadcast","arguments":[` + oddPayload + `]}`)
	for i, c := range clients {
		if got := c.NextNonPingRecord(); got != recordLatencyRecord(oddPayload) {
			t.Fatalf("client %d got %s", i, got)
		}
	}
	// n OnConnected + n RecordLatency sent; 1 invocation received. The
	// counter moves once a write returns, which can trail the client's read.
	deadline := time.Now().Add(2 * time.Second)
	for testutil.ToFloat64(h.Metrics.Sent) < 2*n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := testutil.ToFloat64(h.Metrics.Sent); got != 2*n {
		t.Errorf("messages sent = %v, want %d", got, 2*n)
	}
	if got := testutil.ToFloat64(h.Metrics.Received); got != 1 {
		t.Errorf("messages received = %v, want 1", got)
	}
	// With an invocationId the sender gets its copy before the Completion.
	clients[0].Send(`{"type":1,"invocationId":"b","target":"broadcast","arguments":[{"second":2}]}`)
	if got := clients[0].NextNonPingRecord(); got != recordLatencyRecord(`{"second":2}`) {
		t.Fatalf("sender got %s first", got)
	}
	if got := clients[0].NextNonPingRecord(); got != `{"type":3,"invocationId":"b"}` {
		t.Fatalf("sender got %s, want the Completion", got)
	}
	for _, c := range clients[1:] {
		if got := c.NextNonPingRecord(); got != recordLatencyRecord(`{"second":2}`) {
			t.Fatalf("receiver got %s", got)
		}
	}
	if got := testutil.ToFloat64(h.Metrics.Connections); got != n {
		t.Errorf("connections = %v, want %d", got, n)
	}
}

func TestSendToClientReachesOnlyThatConnection(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	a, b := wiretest.Connect(t, srv), wiretest.Connect(t, srv)
	payload := `{"information.ConnectionId":"` + b.ID + `","payload.Timestamp":1}`
	a.Send(`{"type":1,"invocationId":"1","target":"SendToClient","arguments":[` + payload + `]}`)
	if got := b.NextNonPingRecord(); got != recordLatencyRecord(payload) {
		t.Fatalf("b got %s", got)
	}
	if got := a.NextNonPingRecord(); got != `{"type":3,"invocationId":"1"}` {
		t.Fatalf("a got %s, want only its Completion", got)
	}
	// An unknown connection id is not an error, as in ASP.NET.
	a.Send(`{"type":1,"invocationId":"2","target":"SendToClient","arguments":[{"information.ConnectionId":"nobody"}]}`)
	if got := a.NextNonPingRecord(); got != `{"type":3,"invocationId":"2"}` {
		t.Fatalf("a got %s", got)
	}
}

func TestGroups(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	a, b, outsider := wiretest.Connect(t, srv), wiretest.Connect(t, srv), wiretest.Connect(t, srv)
	for _, c := range []*wiretest.RawClient{a, b} {
		c.Send(`{"type":1,"invocationId":"j","target":"JoinGroup","arguments":["g1","extra",3]}`)
		if got := c.NextNonPingRecord(); got != `{"type":1,"target":"JoinGroup","arguments":[]}` {
			t.Fatalf("join callback = %s", got)
		}
		if got := c.NextNonPingRecord(); got != `{"type":3,"invocationId":"j"}` {
			t.Fatalf("join completion = %s", got)
		}
	}
	payload := `{"information.GroupName":"g1","payload.Timestamp":5}`
	outsider.Send(`{"type":1,"target":"SendToGroup","arguments":[` + payload + `]}`)
	for _, c := range []*wiretest.RawClient{a, b} {
		if got := c.NextNonPingRecord(); got != recordLatencyRecord(payload) {
			t.Fatalf("member got %s", got)
		}
	}
	b.Send(`{"type":1,"target":"leavegroup","arguments":["g1"]}`)
	if got := b.NextNonPingRecord(); got != `{"type":1,"target":"LeaveGroup","arguments":[]}` {
		t.Fatalf("leave callback = %s", got)
	}
	outsider.Send(`{"type":1,"target":"SendToGroup","arguments":[` + payload + `]}`)
	if got := a.NextNonPingRecord(); got != recordLatencyRecord(payload) {
		t.Fatalf("a got %s", got)
	}
	// Neither b nor the outsider got a group message: their next message is
	// their own echo.
	for _, c := range []*wiretest.RawClient{b, outsider} {
		c.Send(`{"type":1,"target":"Echo","arguments":[{"own":true}]}`)
		if got := c.NextNonPingRecord(); got != recordLatencyRecord(`{"own":true}`) {
			t.Fatalf("non-member got %s", got)
		}
	}
	a.WS.Close()
	wiretest.WaitFor(t, "the empty group to be dropped", func() bool {
		h.Mu.RLock()
		defer h.Mu.RUnlock()
		return len(h.home.Groups) == 0
	})
}

func TestConnectionIDMethods(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	c.Send(`{"type":1,"target":"ConnectionId","arguments":[]}`)
	if got, want := c.NextNonPingRecord(), `{"type":1,"target":"ConnectionId","arguments":["`+c.ID+`"]}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	c.Send(`{"type":1,"invocationId":"9","target":"getconnectionid","arguments":[]}`)
	if got, want := c.NextNonPingRecord(), `{"type":3,"invocationId":"9","result":"`+c.ID+`"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestInvocationErrors(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
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
		c.Send(tc.send)
		if got := c.NextNonPingRecord(); got != tc.want {
			t.Errorf("sent %s\n got %s\nwant %s", tc.send, got, tc.want)
		}
	}
	// Failures without an invocationId are silent; the connection lives on.
	c.Send(`{"type":1,"target":"Nope","arguments":[]}`)
	c.Send(`{"type":1,"target":"Echo","arguments":[{"alive":1}]}`)
	if got := c.NextNonPingRecord(); got != recordLatencyRecord(`{"alive":1}`) {
		t.Fatalf("got %s", got)
	}
}

func TestStreamingEcho(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	c.Send(`{"type":4,"invocationId":"s1","target":"StreamingEcho","arguments":[1],"streamIds":["x"]}`)
	items := []string{`{"k":1}`, `{"k":"two"}`, `{"k":[3]}`}
	for _, it := range items {
		c.Send(`{"type":2,"invocationId":"x","item":` + it + `}`)
	}
	c.Send(`{"type":3,"invocationId":"x"}`)
	for _, it := range items {
		if got, want := c.NextNonPingRecord(), `{"type":2,"invocationId":"s1","item":`+it+`}`; got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	if got := c.NextNonPingRecord(); got != `{"type":3,"invocationId":"s1"}` {
		t.Fatalf("got %s, want the stream's Completion", got)
	}
}

func TestStreamingEchoCancel(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	// A long pause after the first item leaves the stream waiting when the
	// cancel arrives.
	c.Send(`{"type":4,"invocationId":"s2","target":"streamingecho","arguments":[60000],"streamIds":["y"]}`)
	c.Send(`{"type":2,"invocationId":"y","item":{"k":1}}`)
	if got := c.NextNonPingRecord(); got != `{"type":2,"invocationId":"s2","item":{"k":1}}` {
		t.Fatalf("got %s", got)
	}
	start := time.Now()
	c.Send(`{"type":5,"invocationId":"s2"}`)
	if got := c.NextNonPingRecord(); got != `{"type":3,"invocationId":"s2"}` {
		t.Fatalf("got %s, want the Completion of the cancelled stream", got)
	}
	if waited := time.Since(start); waited > wiretest.Timeout {
		t.Fatalf("cancel took %v", waited)
	}
	// Items for the cancelled stream are ignored.
	c.Send(`{"type":2,"invocationId":"y","item":{"k":2}}`)
	c.Send(`{"type":1,"target":"Echo","arguments":[{"after":1}]}`)
	if got := c.NextNonPingRecord(); got != recordLatencyRecord(`{"after":1}`) {
		t.Fatalf("got %s", got)
	}
}

func TestStreamingEchoUploadError(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	c.Send(`{"type":4,"invocationId":"s3","target":"StreamingEcho","arguments":[0],"streamIds":["z"]}`)
	c.Send(`{"type":3,"invocationId":"z","error":"boom"}`)
	want := `{"type":3,"invocationId":"s3","error":"The client's stream ended with an error: boom"}`
	if got := c.NextNonPingRecord(); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestDeliveryDelay(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	const delay = 300 * time.Millisecond
	h.SetDeliveryDelay(delay)
	start := time.Now()
	c.Send(`{"type":1,"invocationId":"1","target":"Echo","arguments":[{"slow":1}]}`)
	// The hub method returns at once; only the delivery waits.
	if got := c.NextNonPingRecord(); got != `{"type":3,"invocationId":"1"}` {
		t.Fatalf("got %s, want the Completion first", got)
	}
	if got := c.NextNonPingRecord(); got != recordLatencyRecord(`{"slow":1}`) {
		t.Fatalf("got %s", got)
	}
	if waited := time.Since(start); waited < delay {
		t.Fatalf("RecordLatency came after %v, want at least %v", waited, delay)
	}
	h.SetDeliveryDelay(0)
	if n := h.delayed.Len(); n != 0 {
		t.Fatalf("%d deliveries still delayed", n)
	}
}

func TestDeliveryDelayAppliesToStreams(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{DeliveryDelay: 200 * time.Millisecond})
	c := wiretest.Connect(t, srv)
	start := time.Now()
	c.Send(`{"type":4,"invocationId":"s","target":"StreamingEcho","arguments":[0],"streamIds":["u"]}`)
	c.Send(`{"type":2,"invocationId":"u","item":{"k":1}}`)
	c.Send(`{"type":3,"invocationId":"u"}`)
	if got := c.NextNonPingRecord(); got != `{"type":2,"invocationId":"s","item":{"k":1}}` {
		t.Fatalf("got %s", got)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Fatalf("item came back after %v, want at least 200ms", waited)
	}
	if got := c.NextNonPingRecord(); !strings.HasPrefix(got, `{"type":3,"invocationId":"s"`) {
		t.Fatalf("got %s", got)
	}
	_ = h
}

// Delayed deliveries outlive the read that carried them: the next record
// read into the same buffer must not change what is delivered late.
func TestDeliveryDelayKeepsEachPayload(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	h.SetDeliveryDelay(200 * time.Millisecond)
	payloads := []string{`{"k":"first"}`, `{"k":"other"}`, `{"k":"third"}`}
	for i, p := range payloads {
		c.Send(fmt.Sprintf(`{"type":1,"invocationId":"%d","target":"Echo","arguments":[%s]}`, i, p))
	}
	var got []string
	for len(got) < 2*len(payloads) {
		got = append(got, c.NextNonPingRecord())
	}
	var delivered []string
	for _, rec := range got {
		if strings.Contains(rec, "RecordLatency") {
			delivered = append(delivered, rec)
		}
	}
	want := make([]string, len(payloads))
	for i, p := range payloads {
		want[i] = recordLatencyRecord(p)
	}
	if !slices.Equal(delivered, want) {
		t.Fatalf("delivered %q, want %q", delivered, want)
	}
}

// Uploaded items wait in the stream's buffer while the reader goes on: each
// must come back as it was sent.
func TestStreamingEchoKeepsEachItem(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	c.Send(`{"type":4,"invocationId":"s","target":"StreamingEcho","arguments":[50],"streamIds":["u"]}`)
	const n = 5
	for i := range n {
		c.Send(fmt.Sprintf(`{"type":2,"invocationId":"u","item":{"k":"item-%d"}}`, i))
	}
	c.Send(`{"type":3,"invocationId":"u"}`)
	for i := range n {
		want := fmt.Sprintf(`{"type":2,"invocationId":"s","item":{"k":"item-%d"}}`, i)
		if got := c.NextNonPingRecord(); got != want {
			t.Fatalf("item %d: got %s, want %s", i, got, want)
		}
	}
}
