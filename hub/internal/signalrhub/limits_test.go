package signalrhub

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestHandshakeRefusals(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	cases := []struct{ send, want string }{
		{"hello\x1e", `{"error":"The handshake request is not valid."}`},
		{`{"protocol":"json"}` + "\x1e", `{"error":"The handshake request is not valid."}`},
		{`{"protocol":"xml","version":1}` + "\x1e", `{"error":"Requested protocol 'xml' is not available."}`},
		{`{"protocol":"json","version":2}` + "\x1e", `{"error":"The server does not support version 2 of the 'json' protocol."}`},
	}
	for _, tc := range cases {
		c := wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), ""))
		c.SendRaw(tc.send)
		if got := string(c.NextRecord()); got != tc.want {
			t.Errorf("sent %q: got %s, want %s", tc.send, got, tc.want)
		}
		c.ExpectClosed()
	}
}

func TestHandshakeSplitAcrossMessagesWithTrailingInvocation(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), ""))
	c.SendRaw(`{"protocol":"js`)
	c.SendRaw(`on","version":1}` + "\x1e" + `{"type":1,"target":"Echo","arguments":[{"early":1}]}` + "\x1e")
	if got := string(c.NextRecord()); got != "{}" {
		t.Fatalf("got %s", got)
	}
	if m := c.Next(); m.Target != "OnConnected" {
		t.Fatalf("got %+v", m)
	}
	if got := c.NextNonPingRecord(); got != recordLatencyRecord(`{"early":1}`) {
		t.Fatalf("got %s", got)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	h, srv, _ := startHub(t, Config{HandshakeTimeout: 100 * time.Millisecond}, core.Config{})
	c := wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), ""))
	start := time.Now()
	if rec, err := c.TryNextRecord(wiretest.Timeout); err == nil || transport.IsTimeout(err) {
		t.Fatalf("got %q %v, want the socket closed without data", rec, err)
	}
	if waited := time.Since(start); waited >= wiretest.Timeout {
		t.Fatalf("closed after %v", waited)
	}
	if got := testutil.ToFloat64(h.Metrics.Connections); got != 0 {
		t.Fatalf("connections = %v, want 0", got)
	}
}

func TestKeepAlivePings(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{KeepAliveInterval: 30 * time.Millisecond, ClientTimeout: time.Minute})
	c := wiretest.Connect(t, srv)
	for i := 0; i < 2; i++ {
		if got := string(c.NextRecord()); got != `{"type":6}` {
			t.Fatalf("idle client got %s, want keep-alive pings", got)
		}
	}
}

func TestClientTimeout(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{KeepAliveInterval: 50 * time.Millisecond, ClientTimeout: 600 * time.Millisecond})
	silent := wiretest.Connect(t, srv)
	talker := wiretest.Connect(t, srv)

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the talker pings far more often than the client timeout
		defer close(done)
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				_ = talker.WS.WriteMessage(1, []byte(`{"type":6}`+"\x1e"))
			}
		}
	}()

	want := `{"type":7,"error":"Connection closed with an error. The client sent nothing within the client timeout."}`
	if got := silent.NextNonPingRecord(); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	silent.ExpectClosed()
	close(stop)
	<-done
	// The talker outlived the silent client's timeout and still works.
	talker.Send(`{"type":1,"target":"Echo","arguments":[{"alive":1}]}`)
	if got := talker.NextNonPingRecord(); got != recordLatencyRecord(`{"alive":1}`) {
		t.Fatalf("talker got %s", got)
	}
}

func paddedEcho(size int) string {
	head, tail := `{"type":1,"target":"Echo","arguments":[{"p":"`, `"}]}`
	return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
}

func TestMaximumMessageSize(t *testing.T) {
	_, srv, _ := startHub(t, Config{MaxMessageSize: 1024}, core.Config{})
	c := wiretest.Connect(t, srv)
	atLimit := paddedEcho(1024)
	c.Send(atLimit)
	if got := c.NextNonPingRecord(); !strings.HasPrefix(got, `{"type":1,"target":"RecordLatency"`) {
		t.Fatalf("record of exactly the limit: got %.60s", got)
	}

	over := paddedEcho(1025)
	c.SendRaw(over[:600]) // the oversize record arrives in two messages
	c.SendRaw(over[600:] + "\x1e")
	want := `{"type":7,"error":"Connection closed with an error. The maximum message size of 1024B was exceeded."}`
	if got := c.NextNonPingRecord(); got != want {
		t.Fatalf("got %.100s, want %s", got, want)
	}
	c.ExpectClosed()
}

func TestDefaultMaximumIs32KiB(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	c.Send(paddedEcho(32 * 1024))
	if got := c.NextNonPingRecord(); !strings.HasPrefix(got, `{"type":1,"target":"RecordLatency"`) {
		t.Fatalf("32 KiB record: got %.60s", got)
	}
	c.Send(paddedEcho(32*1024 + 1))
	if got := c.NextNonPingRecord(); got != `{"type":7,"error":"Connection closed with an error. The maximum message size of 32768B was exceeded."}` {
		t.Fatalf("got %.100s", got)
	}
}

func TestGarbageAfterHandshakeClosesWithError(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	for _, garbage := range []string{
		"not json\x1e",
		`{"type":99}` + "\x1e",
		`{"type":1,"arguments":[]}` + "\x1e",
		`{"type":4,"target":"StreamingEcho","arguments":[0]}` + "\x1e",
		`{"type":3,"invocationId":"1","result":1,"error":"x"}` + "\x1e",
		`[1,2,3]` + "\x1e",
	} {
		c := wiretest.Connect(t, srv)
		c.SendRaw(garbage)
		if got := c.NextNonPingRecord(); got != `{"type":7,"error":"Connection closed with an error."}` {
			t.Errorf("after %q got %s", garbage, got)
		}
		c.ExpectClosed()
	}
	if got := testutil.ToFloat64(h.Metrics.Panics); got != 0 {
		t.Fatalf("panics = %v", got)
	}
}

func TestRandomInputNeverPanics(t *testing.T) {
	h, srv, _ := startHub(t, Config{MaxMessageSize: 512}, core.Config{})
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("{}[]\":,0123456789.-eE truefalsnul\\u\x1e\x00\xff" + "typeargumentsinvocationIdtargetstreamIdsitem")
	for i := 0; i < 60; i++ {
		c := wiretest.Connect(t, srv)
		for j := 0; j < 4; j++ {
			b := make([]byte, 1+rng.IntN(200))
			for k := range b {
				b[k] = alphabet[rng.IntN(len(alphabet))]
			}
			if err := c.WS.WriteMessage(1+rng.IntN(2), b); err != nil {
				break // the hub already closed this one
			}
		}
		c.WS.Close()
	}
	// Structured but hostile records, all on one connection.
	c := wiretest.Connect(t, srv)
	for _, rec := range []string{
		`{"type":2,"invocationId":"nope","item":1}`,
		`{"type":3,"invocationId":"nope"}`,
		`{"type":5,"invocationId":"nope"}`,
		`{"type":8,"sequenceId":1}`,
		`{"type":1,"target":"SendToClient","arguments":[{"information.ConnectionId":{"x":1}}]}`,
		`{"type":1,"target":"SendToClient","arguments":[{"information.ConnectionId":"\ud800"}]}`,
		`{"type":4,"invocationId":"a","target":"StreamingEcho","arguments":[-1],"streamIds":["s"]}`,
		`{"type":4,"invocationId":"b","target":"StreamingEcho","arguments":["x"],"streamIds":["s"]}`,
		`{"type":4,"invocationId":"c","target":"StreamingEcho","arguments":[0],"streamIds":[]}`,
		`{"type":1,"target":"` + strings.Repeat("A", 100) + `","arguments":[]}`,
	} {
		c.Send(rec)
	}
	c.Send(`{"type":1,"target":"Echo","arguments":[{"survived":true}]}`)
	for _, id := range []string{"a", "b", "c"} { // the stream invocations fail
		if got := c.NextNonPingRecord(); !strings.HasPrefix(got, `{"type":3,"invocationId":"`+id+`","error":`) {
			t.Fatalf("got %s, want an error Completion for %s", got, id)
		}
	}
	if got := c.NextNonPingRecord(); got != recordLatencyRecord(`{"survived":true}`) {
		t.Fatalf("got %s", got)
	}
	if got := testutil.ToFloat64(h.Metrics.Panics); got != 0 {
		t.Fatalf("panics = %v", got)
	}
}

func TestClientCloseMessageEndsConnection(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	c.Send(`{"type":7}`)
	c.ExpectClosed()
	wiretest.WaitFor(t, "the connection to be removed", func() bool { return testutil.ToFloat64(h.Metrics.Connections) == 0 })
}

func TestSlowConsumerIsDisconnected(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{SendQueueSize: 4})
	slow, fast := wiretest.Connect(t, srv), wiretest.Connect(t, srv)
	slowConn := h.connByID(slow.ID)

	payload := `{"blob":"` + strings.Repeat("b", 16*1024) + `"}`
	sent := 0
	for !slowConn.closed.Load() {
		if sent++; sent > 20000 {
			t.Fatal("slow consumer never disconnected")
		}
		fast.Send(`{"type":1,"target":"Broadcast","arguments":[` + payload + `]}`)
		fast.NextNonPingRecord()
	}
	// The slow client now reads: what was queued, then the Close message.
	received := 0
	for {
		rec := slow.NextNonPingRecord()
		if strings.HasPrefix(rec, `{"type":1,"target":"RecordLatency"`) {
			received++
			continue
		}
		if want := `{"type":7,"error":"Connection closed with an error. The client did not read its messages fast enough."}`; rec != want {
			t.Fatalf("got %.80s, want %s", rec, want)
		}
		break
	}
	slow.ExpectClosed()
	if received >= sent {
		t.Fatalf("slow client received %d of %d broadcasts; some should have been dropped", received, sent)
	}
	fast.Send(`{"type":1,"target":"Echo","arguments":[{"fast":1}]}`)
	if got := fast.NextNonPingRecord(); got != recordLatencyRecord(`{"fast":1}`) {
		t.Fatalf("fast client got %.80s", got)
	}
}

func TestHubCloseSendsCloseToEveryClient(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	a, b := wiretest.Connect(t, srv), wiretest.Connect(t, srv)
	pending := wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), "")) // no handshake yet
	h.Close()
	for _, c := range []*wiretest.RawClient{a, b} {
		if got := c.NextNonPingRecord(); got != `{"type":7}` {
			t.Fatalf("got %s, want {\"type\":7}", got)
		}
		c.ExpectClosed()
	}
	pending.ExpectClosed()

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/signalrbench/negotiate", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("negotiate after Close = %d, want 503", rec.Code)
	}
	h.Close() // idempotent
}

func TestPanicInAMethodIsRecoveredAndCounted(t *testing.T) {
	methods["panicnow"] = &method{name: "PanicNow", call: func(*conn, *signalr.Message) ([]byte, string) {
		panic("test panic")
	}}
	t.Cleanup(func() { delete(methods, "panicnow") })
	h, srv, _ := startHub(t, Config{}, core.Config{})
	victim, bystander := wiretest.Connect(t, srv), wiretest.Connect(t, srv)
	victim.Send(`{"type":1,"target":"PanicNow","arguments":[]}`)
	if got := victim.NextNonPingRecord(); got != `{"type":7,"error":"Connection closed with an error."}` {
		t.Fatalf("got %s", got)
	}
	victim.ExpectClosed()
	if got := testutil.ToFloat64(h.Metrics.Panics); got != 1 {
		t.Fatalf("panics = %v, want 1", got)
	}
	bystander.Send(`{"type":1,"target":"Echo","arguments":[{"ok":1}]}`)
	if got := bystander.NextNonPingRecord(); got != recordLatencyRecord(`{"ok":1}`) {
		t.Fatalf("bystander got %s", got)
	}
}

func TestRepliesToOneReadShareOneWrite(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	tr := h.connByID(c.ID).t.(transport.WebSocket)
	if tr.Reader == nil {
		t.Fatal("the upgrade did not expose the connection's read buffer")
	}
	batch := ""
	for i := 1; i <= 3; i++ {
		batch += fmt.Sprintf(`{"type":1,"invocationId":"%d","target":"Echo","arguments":[{"i":%d}]}`+"\x1e", i, i)
	}
	c.SendRaw(batch)
	_ = c.WS.SetReadDeadline(time.Now().Add(wiretest.Timeout))
	_, msg, err := c.WS.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for i := 1; i <= 3; i++ {
		want += recordLatencyRecord(fmt.Sprintf(`{"i":%d}`, i)) + "\x1e" + fmt.Sprintf(`{"type":3,"invocationId":"%d"}`, i) + "\x1e"
	}
	if string(msg) != want {
		t.Fatalf("got  %q\nwant %q (one message)", msg, want)
	}
}

func TestCloseStopsEveryGoroutine(t *testing.T) {
	http.DefaultClient.CloseIdleConnections()
	baseline := runtime.NumGoroutine()
	h, srv, _ := startHub(t, Config{}, core.Config{DeliveryDelay: time.Hour})
	clients := []*wiretest.RawClient{wiretest.Connect(t, srv), wiretest.Connect(t, srv), wiretest.Connect(t, srv)}
	// A stream paused for a minute and a delivery delayed for an hour must
	// not hold Close up.
	clients[0].Send(`{"type":4,"invocationId":"s","target":"StreamingEcho","arguments":[60000],"streamIds":["x"]}`)
	clients[0].Send(`{"type":2,"invocationId":"x","item":{"k":1}}`)
	clients[1].Send(`{"type":1,"target":"Echo","arguments":[{"later":1}]}`)
	wiretest.WaitFor(t, "the delayed echo to be queued", func() bool { return h.delayed.Len() == 1 })

	srv.Close()
	for _, c := range clients {
		c.WS.Close()
	}
	http.DefaultClient.CloseIdleConnections()
	wiretest.WaitFor(t, "goroutines to return to the baseline", func() bool { return runtime.NumGoroutine() <= baseline })
}
