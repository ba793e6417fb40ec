package signalrhub

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const jsonHandshake = `{"protocol":"json","version":1}` + "\x1e"

func onConnectedRecord(id string) string {
	return `{"type":1,"target":"OnConnected","arguments":["` + id + `"]}` + "\x1e"
}

func TestServerSentEventsHeadersAndFraming(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	n := wiretest.Negotiate(t, srv.URL())
	hc := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken)
	s := hc.OpenSSE()
	want := map[string]string{
		"Content-Type":     "text/event-stream",
		"Cache-Control":    "no-cache,no-store",
		"Pragma":           "no-cache",
		"Content-Encoding": "identity",
		"Long-Running":     "true",
	}
	for k, v := range want {
		if got := s.Resp.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if s.Resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", s.Resp.StatusCode)
	}
	if first, err := s.Raw.ReadString('\n'); err != nil || first != ":\r\n" {
		t.Fatalf("stream starts with %q (%v), want the comment \":\\r\\n\"", first, err)
	}

	hc.Post(jsonHandshake).Expect(t, "handshake POST", http.StatusOK, "")
	raw, err := s.RawEvent()
	if want := "data: {}\x1e" + onConnectedRecord(n.ConnectionID) + "\r\n\r\n"; err != nil || raw != want {
		t.Fatalf("first event %q (%v), want %q", raw, err, want)
	}

	// A payload spanning lines becomes one event with one data field per
	// line; the client joins them with LF again.
	hc.Post(`{"type":1,"target":"Echo","arguments":[{"a":`+"\r\n"+`1}]}`+"\x1e").Expect(t, "echo POST", http.StatusOK, "")
	raw, err = s.RawEvent()
	if want := "data: " + `{"type":1,"target":"RecordLatency","arguments":[{"a":` + "\r\ndata: 1}]}\x1e\r\n\r\n"; err != nil || raw != want {
		t.Fatalf("event %q (%v), want %q", raw, err, want)
	}
}

func TestServerSentEventsRefuseMessagePack(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	n := wiretest.Negotiate(t, srv.URL())
	hc := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken)
	s := hc.OpenSSE()
	hc.Post(`{"protocol":"messagepack","version":1}`+"\x1e").Expect(t, "handshake POST", http.StatusOK, "")
	want := `{"error":"Cannot use the 'messagepack' protocol on the current transport. The transport does not support 'Binary' transfer format."}` + "\x1e"
	if got := s.Event(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if rest, err := io.ReadAll(s.Raw); err != nil || len(rest) != 0 {
		t.Fatalf("after the refusal the stream should end: %q %v", rest, err)
	}
	wiretest.WaitFor(t, "the token to be released", func() bool { return h.tokens.Len() == 0 })
	hc.Post(jsonHandshake).Expect(t, "POST after the end", http.StatusNotFound, errMsgUnknownID)
}

func TestPostStatusCodes(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	wiretest.NewHTTPConn(t, srv.URL(), "").Post(jsonHandshake).Expect(t, "no id", http.StatusBadRequest, "Connection ID required")
	wiretest.NewHTTPConn(t, srv.URL(), "nope").Post(jsonHandshake).Expect(t, "unknown id", http.StatusNotFound, "No Connection with that ID")

	ws := wiretest.Negotiate(t, srv.URL())
	wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), ws.ConnectionToken)).Handshake()
	wiretest.NewHTTPConn(t, srv.URL(), ws.ConnectionToken).Post(jsonHandshake).
		Expect(t, "POST to a WebSocket", http.StatusMethodNotAllowed, "POST requests are not allowed for WebSocket connections.")

	n := wiretest.Negotiate(t, srv.URL())
	hc := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken)
	s := hc.OpenSSE()
	hc.Post(jsonHandshake).Expect(t, "handshake", http.StatusOK, "")
	if got := s.Event(); !strings.HasSuffix(got, onConnectedRecord(n.ConnectionID)) {
		t.Fatalf("got %q", got)
	}

	// A POST whose body is still arriving holds the connection's reader; a
	// second POST meanwhile is refused and the connection stays open.
	pr, pw := io.Pipe()
	first := make(chan wiretest.HTTPResult, 1)
	go func() { first <- hc.Do(http.MethodPost, pr, "") }()
	_, _ = io.WriteString(pw, `{"type":1,"target":"Echo",`)
	c := h.connByID(n.ConnectionID)
	wiretest.WaitFor(t, "the first POST to be read", func() bool { return c.httpInbox().Busy() })
	hc.Post(`{"type":6}`+"\x1e").Expect(t, "concurrent POST", http.StatusConflict, "Another send request is already in progress.")
	_, _ = io.WriteString(pw, `"arguments":[{"first":1}]}`+"\x1e")
	pw.Close()
	(<-first).Expect(t, "first POST", http.StatusOK, "")
	if got := s.Event(); got != recordLatencyRecord(`{"first":1}`)+"\x1e" {
		t.Fatalf("got %q", got)
	}
	hc.Post(`{"type":1,"target":"Echo","arguments":[{"after":1}]}`+"\x1e").Expect(t, "POST after the conflict", http.StatusOK, "")
	if got := s.Event(); got != recordLatencyRecord(`{"after":1}`)+"\x1e" {
		t.Fatalf("got %q", got)
	}

	hc.Post(`{"type":7}`+"\x1e").Expect(t, "client Close", http.StatusOK, "")
	wiretest.WaitFor(t, "the connection to end", func() bool { return h.tokens.Len() == 1 }) // the WebSocket's
	hc.Post(`{"type":6}`+"\x1e").Expect(t, "POST to an ended connection", http.StatusNotFound, "No Connection with that ID")
}

func TestLongPollingStatusCodes(t *testing.T) {
	h, srv, _ := startHub(t, Config{PollTimeout: 100 * time.Millisecond}, core.Config{})
	noID := wiretest.NewHTTPConn(t, srv.URL(), "")
	noID.Poll().Expect(t, "GET without id", http.StatusBadRequest, "Connection ID required")
	noID.Delete().Expect(t, "DELETE without id", http.StatusBadRequest, "Connection ID required")
	wiretest.NewHTTPConn(t, srv.URL(), "nope").Poll().Expect(t, "GET unknown id", http.StatusNotFound, "No Connection with that ID")
	wiretest.NewHTTPConn(t, srv.URL(), "nope").Delete().Expect(t, "DELETE unknown id", http.StatusNotFound, "No Connection with that ID")

	n := wiretest.Negotiate(t, srv.URL())
	hc := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken)
	first := hc.Poll()
	first.Expect(t, "first poll", http.StatusOK, "")
	checkPollHeaders(t, first, "text/plain")
	hc.Do(http.MethodGet, nil, "text/event-stream").Expect(t, "switching to SSE", http.StatusBadRequest, "Cannot change transports mid-connection")

	hc.Post(jsonHandshake).Expect(t, "handshake", http.StatusOK, "")
	data := hc.Poll()
	data.Expect(t, "data poll", http.StatusOK, "{}\x1e"+onConnectedRecord(n.ConnectionID))
	checkPollHeaders(t, data, "application/octet-stream")
	if got := data.Header.Get("Content-Length"); got != strconv.Itoa(len(data.Body)) {
		t.Fatalf("Content-Length %s for %d bytes", got, len(data.Body))
	}

	timedOut := hc.Poll()
	timedOut.Expect(t, "poll timeout", http.StatusOK, "")
	checkPollHeaders(t, timedOut, "text/plain")
	if timedOut.Header.Get("Content-Length") != "0" {
		t.Fatalf("timeout Content-Length %q", timedOut.Header.Get("Content-Length"))
	}

	// Several messages since the last poll come back in one body.
	hc.Post(`{"type":1,"target":"Echo","arguments":[{"i":1}]}` + "\x1e" + `{"type":1,"target":"Echo","arguments":[{"i":2}]}` + "\x1e")
	hc.Poll().Expect(t, "batched poll", http.StatusOK,
		recordLatencyRecord(`{"i":1}`)+"\x1e"+recordLatencyRecord(`{"i":2}`)+"\x1e")

	hc.Delete().Expect(t, "DELETE", http.StatusAccepted, "")
	wiretest.WaitFor(t, "the connection to end", func() bool { return h.tokens.Len() == 0 })
	hc.Poll().Expect(t, "poll after the end", http.StatusNotFound, "No Connection with that ID")
	hc.Post(`{"type":6}`+"\x1e").Expect(t, "POST after the end", http.StatusNotFound, "No Connection with that ID")
}

func TestLongPollingNewerPollAndDelete(t *testing.T) {
	h, srv, _ := startHub(t, Config{PollTimeout: wiretest.Timeout}, core.Config{})
	n := wiretest.Negotiate(t, srv.URL())
	hc := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken)
	hc.Poll()
	hc.Post(jsonHandshake)
	hc.Poll()

	// A newer poll replaces the waiting one, which gets 204.
	older := make(chan wiretest.HTTPResult, 1)
	go func() { older <- hc.Poll() }()
	c := h.connByID(n.ConnectionID)
	wiretest.WaitFor(t, "the older poll to wait", func() bool { return c.lp.IdleFor(h.Now()) == 0 })
	newer := make(chan wiretest.HTTPResult, 1)
	go func() { newer <- hc.Poll() }()
	(<-older).Expect(t, "replaced poll", http.StatusNoContent, "")

	// DELETE ends the connection: the waiting poll gets 204.
	hc.Delete().Expect(t, "DELETE", http.StatusAccepted, "")
	(<-newer).Expect(t, "poll when deleted", http.StatusNoContent, "")
	wiretest.WaitFor(t, "the connection to end", func() bool { return h.tokens.Len() == 0 })
	hc.Poll().Expect(t, "poll after the end", http.StatusNotFound, "No Connection with that ID")
	hc.Post(`{"type":6}`+"\x1e").Expect(t, "POST after the end", http.StatusNotFound, "No Connection with that ID")
	if got := testutil.ToFloat64(h.Metrics.Connections); got != 0 {
		t.Fatalf("connections = %v", got)
	}
}

func checkPollHeaders(t *testing.T, r wiretest.HTTPResult, contentType string) {
	t.Helper()
	for k, v := range map[string]string{"Content-Type": contentType, "Long-Running": "true", "Cache-Control": "no-cache, no-store", "Pragma": "no-cache"} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("poll header %s = %q, want %q", k, got, v)
		}
	}
}

func TestDeleteOnlyEndsLongPolling(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	n := wiretest.Negotiate(t, srv.URL())
	hc := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken)
	hc.OpenSSE()
	wiretest.WaitFor(t, "the stream to attach", func() bool { _, _, st := h.tokens.Lookup(n.ConnectionToken); return st == http.StatusOK })
	hc.Delete().Expect(t, "DELETE of SSE", http.StatusBadRequest, "Cannot terminate this connection using the DELETE endpoint.")
	hc.Do(http.MethodGet, nil, "text/event-stream").Expect(t, "second stream", http.StatusConflict, errMsgAlreadyRunning)
}

func TestHubCloseReachesLongPollingClients(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	n := wiretest.Negotiate(t, srv.URL())
	hc := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken)
	hc.Poll()
	hc.Post(jsonHandshake)
	hc.Poll()
	closed := make(chan struct{})
	go func() { defer close(closed); h.Close() }()
	hc.PollFor().Expect(t, "poll during Close", http.StatusOK, `{"type":7}`+"\x1e")
	hc.Poll().Expect(t, "last poll", http.StatusNoContent, "")
	<-closed
}

func TestLimitsApplyOnHTTPTransports(t *testing.T) {
	t.Run("handshake timeout on SSE", func(t *testing.T) {
		h, srv, _ := startHub(t, Config{HandshakeTimeout: 100 * time.Millisecond}, core.Config{})
		n := wiretest.Negotiate(t, srv.URL())
		s := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken).OpenSSE()
		if rest, err := io.ReadAll(s.Raw); err != nil || string(rest) != ":\r\n" {
			t.Fatalf("stream %q %v, want it to end after the opening comment", rest, err)
		}
		wiretest.WaitFor(t, "the token to be released", func() bool { return h.tokens.Len() == 0 })
	})
	t.Run("client timeout on Long Polling", func(t *testing.T) {
		h, srv, _ := startHub(t, Config{PollTimeout: 50 * time.Millisecond}, core.Config{KeepAliveInterval: 20 * time.Millisecond, ClientTimeout: 200 * time.Millisecond})
		n := wiretest.Negotiate(t, srv.URL())
		hc := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken)
		hc.Poll()
		hc.Post(jsonHandshake)
		// Polling keeps the connection alive though the client sends nothing,
		// and no keep-alive Pings are spent on it.
		deadline := time.Now().Add(400 * time.Millisecond)
		for time.Now().Before(deadline) {
			if r := hc.Poll(); r.Status != http.StatusOK || r.Body != "" && r.Body != "{}\x1e"+onConnectedRecord(n.ConnectionID) {
				t.Fatalf("poll got %d %q", r.Status, r.Body)
			}
		}
		// Without polls it times out.
		wiretest.WaitFor(t, "the silent client to be closed", func() bool { return h.tokens.Len() == 0 })
		hc.Post(`{"type":6}`+"\x1e").Expect(t, "POST after the timeout", http.StatusNotFound, errMsgUnknownID)
	})
	t.Run("maximum message size on Long Polling", func(t *testing.T) {
		_, srv, _ := startHub(t, Config{MaxMessageSize: 1024}, core.Config{})
		n := wiretest.Negotiate(t, srv.URL())
		hc := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken)
		hc.Poll()
		hc.Post(jsonHandshake)
		hc.Poll()
		hc.Post(paddedEcho(1025)+"\x1e").Expect(t, "oversize POST", http.StatusOK, "")
		hc.PollFor().Expect(t, "poll", http.StatusOK,
			`{"type":7,"error":"Connection closed with an error. The maximum message size of 1024B was exceeded."}`+"\x1e")
		hc.Poll().Expect(t, "last poll", http.StatusNoContent, "")
	})
}

// A Long Polling client that stops polling is a slow consumer like any
// other: at most a buffer of output waits for it, then its send queue
// fills and it is dropped; when it polls again it collects what was
// buffered, the Close, and a 204.
func TestLongPollingSlowConsumer(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{SendQueueSize: 4})
	n := wiretest.Negotiate(t, srv.URL())
	slow := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken)
	slow.Poll()
	slow.Post(jsonHandshake)
	slow.Poll()
	fast := wiretest.Connect(t, srv)
	payload := `{"blob":"` + strings.Repeat("b", 16*1024) + `"}`
	for sent := 0; ; sent++ {
		if sent > 1000 {
			t.Fatal("the client that stopped polling was never dropped")
		}
		fast.Send(`{"type":1,"target":"Broadcast","arguments":[` + payload + `]}`)
		fast.NextNonPingRecord()
		if r := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken).Do(http.MethodPost, strings.NewReader(`{"type":6}`+"\x1e"), ""); r.Status == http.StatusNotFound {
			break // its reader stopped: the connection is closing
		}
	}
	received, closeSeen := 0, false
	for !closeSeen {
		r := slow.PollFor()
		if r.Status != http.StatusOK {
			t.Fatalf("poll before the Close: %d", r.Status)
		}
		if len(r.Body) > transport.MaxPollOutput+len(payload)+200 {
			t.Fatalf("a poll returned %d bytes; at most about %d wait for a client", len(r.Body), transport.MaxPollOutput)
		}
		for _, rec := range strings.Split(strings.TrimSuffix(r.Body, "\x1e"), "\x1e") {
			switch {
			case strings.HasPrefix(rec, `{"type":1,"target":"RecordLatency"`):
				received++
			case rec == `{"type":7,"error":"Connection closed with an error. The client did not read its messages fast enough."}`:
				closeSeen = true
			default:
				t.Fatalf("unexpected record %.80s", rec)
			}
		}
	}
	slow.Poll().Expect(t, "poll after the Close", http.StatusNoContent, "")
	// Buffered: the poll buffer, one batch blocked on it, and the queue.
	if most := 2*(transport.MaxBatchBytes/len(payload)+1) + 4; received == 0 || received > most {
		t.Fatalf("the dropped client received %d broadcasts; want 1 to %d, the buffered ones", received, most)
	}
}
