package hub

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const jsonHandshake = `{"protocol":"json","version":1}` + "\x1e"

func onConnectedRecord(id string) string {
	return `{"type":1,"target":"OnConnected","arguments":["` + id + `"]}` + "\x1e"
}

func TestServerSentEventsHeadersAndFraming(t *testing.T) {
	_, srv, _ := startHub(t, Options{})
	n := negotiate(t, srv.URL())
	hc := newHTTPConn(t, srv.URL(), n.ConnectionToken)
	s := hc.openSSE()
	want := map[string]string{
		"Content-Type":     "text/event-stream",
		"Cache-Control":    "no-cache,no-store",
		"Pragma":           "no-cache",
		"Content-Encoding": "identity",
		"Long-Running":     "true",
	}
	for k, v := range want {
		if got := s.resp.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if s.resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", s.resp.StatusCode)
	}
	if first, err := s.br.ReadString('\n'); err != nil || first != ":\r\n" {
		t.Fatalf("stream starts with %q (%v), want the comment \":\\r\\n\"", first, err)
	}

	hc.post(jsonHandshake).expect(t, "handshake POST", http.StatusOK, "")
	raw, err := s.rawEvent()
	if want := "data: {}\x1e" + onConnectedRecord(n.ConnectionID) + "\r\n\r\n"; err != nil || raw != want {
		t.Fatalf("first event %q (%v), want %q", raw, err, want)
	}

	// A payload spanning lines becomes one event with one data field per
	// line; the client joins them with LF again.
	hc.post(`{"type":1,"target":"Echo","arguments":[{"a":`+"\r\n"+`1}]}`+"\x1e").expect(t, "echo POST", http.StatusOK, "")
	raw, err = s.rawEvent()
	if want := "data: " + `{"type":1,"target":"RecordLatency","arguments":[{"a":` + "\r\ndata: 1}]}\x1e\r\n\r\n"; err != nil || raw != want {
		t.Fatalf("event %q (%v), want %q", raw, err, want)
	}
}

func TestServerSentEventsRefuseMessagePack(t *testing.T) {
	h, srv, _ := startHub(t, Options{})
	n := negotiate(t, srv.URL())
	hc := newHTTPConn(t, srv.URL(), n.ConnectionToken)
	s := hc.openSSE()
	hc.post(`{"protocol":"messagepack","version":1}`+"\x1e").expect(t, "handshake POST", http.StatusOK, "")
	want := `{"error":"Cannot use the 'messagepack' protocol on the current transport. The transport does not support 'Binary' transfer format."}` + "\x1e"
	if got := s.event(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if rest, err := io.ReadAll(s.br); err != nil || len(rest) != 0 {
		t.Fatalf("after the refusal the stream should end: %q %v", rest, err)
	}
	waitFor(t, "the token to be released", func() bool { return h.tokens.len() == 0 })
	hc.post(jsonHandshake).expect(t, "POST after the end", http.StatusNotFound, errMsgUnknownID)
}

func TestPostStatusCodes(t *testing.T) {
	h, srv, _ := startHub(t, Options{})
	newHTTPConn(t, srv.URL(), "").post(jsonHandshake).expect(t, "no id", http.StatusBadRequest, "Connection ID required")
	newHTTPConn(t, srv.URL(), "nope").post(jsonHandshake).expect(t, "unknown id", http.StatusNotFound, "No Connection with that ID")

	ws := negotiate(t, srv.URL())
	dialRaw(t, wsURL(srv.URL(), ws.ConnectionToken)).handshake()
	newHTTPConn(t, srv.URL(), ws.ConnectionToken).post(jsonHandshake).
		expect(t, "POST to a WebSocket", http.StatusMethodNotAllowed, "POST requests are not allowed for WebSocket connections.")

	n := negotiate(t, srv.URL())
	hc := newHTTPConn(t, srv.URL(), n.ConnectionToken)
	s := hc.openSSE()
	hc.post(jsonHandshake).expect(t, "handshake", http.StatusOK, "")
	if got := s.event(); !strings.HasSuffix(got, onConnectedRecord(n.ConnectionID)) {
		t.Fatalf("got %q", got)
	}

	// A POST whose body is still arriving holds the connection's reader; a
	// second POST meanwhile is refused and the connection stays open.
	pr, pw := io.Pipe()
	first := make(chan httpResult, 1)
	go func() { first <- hc.do(http.MethodPost, pr, "") }()
	_, _ = io.WriteString(pw, `{"type":1,"target":"Echo",`)
	c := h.connByID(n.ConnectionID)
	waitFor(t, "the first POST to be read", func() bool { return c.httpInbox().Busy() })
	hc.post(`{"type":6}`+"\x1e").expect(t, "concurrent POST", http.StatusConflict, "Another send request is already in progress.")
	_, _ = io.WriteString(pw, `"arguments":[{"first":1}]}`+"\x1e")
	pw.Close()
	(<-first).expect(t, "first POST", http.StatusOK, "")
	if got := s.event(); got != recordLatencyRecord(`{"first":1}`)+"\x1e" {
		t.Fatalf("got %q", got)
	}
	hc.post(`{"type":1,"target":"Echo","arguments":[{"after":1}]}`+"\x1e").expect(t, "POST after the conflict", http.StatusOK, "")
	if got := s.event(); got != recordLatencyRecord(`{"after":1}`)+"\x1e" {
		t.Fatalf("got %q", got)
	}

	hc.post(`{"type":7}`+"\x1e").expect(t, "client Close", http.StatusOK, "")
	waitFor(t, "the connection to end", func() bool { return h.tokens.len() == 1 }) // the WebSocket's
	hc.post(`{"type":6}`+"\x1e").expect(t, "POST to an ended connection", http.StatusNotFound, "No Connection with that ID")
}

func TestLongPollingStatusCodes(t *testing.T) {
	h, srv, _ := startHub(t, Options{PollTimeout: 100 * time.Millisecond})
	noID := newHTTPConn(t, srv.URL(), "")
	noID.poll().expect(t, "GET without id", http.StatusBadRequest, "Connection ID required")
	noID.delete().expect(t, "DELETE without id", http.StatusBadRequest, "Connection ID required")
	newHTTPConn(t, srv.URL(), "nope").poll().expect(t, "GET unknown id", http.StatusNotFound, "No Connection with that ID")
	newHTTPConn(t, srv.URL(), "nope").delete().expect(t, "DELETE unknown id", http.StatusNotFound, "No Connection with that ID")

	n := negotiate(t, srv.URL())
	hc := newHTTPConn(t, srv.URL(), n.ConnectionToken)
	first := hc.poll()
	first.expect(t, "first poll", http.StatusOK, "")
	checkPollHeaders(t, first, "text/plain")
	hc.do(http.MethodGet, nil, "text/event-stream").expect(t, "switching to SSE", http.StatusBadRequest, "Cannot change transports mid-connection")

	hc.post(jsonHandshake).expect(t, "handshake", http.StatusOK, "")
	data := hc.poll()
	data.expect(t, "data poll", http.StatusOK, "{}\x1e"+onConnectedRecord(n.ConnectionID))
	checkPollHeaders(t, data, "application/octet-stream")
	if got := data.header.Get("Content-Length"); got != strconv.Itoa(len(data.body)) {
		t.Fatalf("Content-Length %s for %d bytes", got, len(data.body))
	}

	timedOut := hc.poll()
	timedOut.expect(t, "poll timeout", http.StatusOK, "")
	checkPollHeaders(t, timedOut, "text/plain")
	if timedOut.header.Get("Content-Length") != "0" {
		t.Fatalf("timeout Content-Length %q", timedOut.header.Get("Content-Length"))
	}

	// Several messages since the last poll come back in one body.
	hc.post(`{"type":1,"target":"Echo","arguments":[{"i":1}]}` + "\x1e" + `{"type":1,"target":"Echo","arguments":[{"i":2}]}` + "\x1e")
	hc.poll().expect(t, "batched poll", http.StatusOK,
		recordLatencyRecord(`{"i":1}`)+"\x1e"+recordLatencyRecord(`{"i":2}`)+"\x1e")

	hc.delete().expect(t, "DELETE", http.StatusAccepted, "")
	waitFor(t, "the connection to end", func() bool { return h.tokens.len() == 0 })
	hc.poll().expect(t, "poll after the end", http.StatusNotFound, "No Connection with that ID")
	hc.post(`{"type":6}`+"\x1e").expect(t, "POST after the end", http.StatusNotFound, "No Connection with that ID")
}

func TestLongPollingNewerPollAndDelete(t *testing.T) {
	h, srv, _ := startHub(t, Options{PollTimeout: testTimeout})
	n := negotiate(t, srv.URL())
	hc := newHTTPConn(t, srv.URL(), n.ConnectionToken)
	hc.poll()
	hc.post(jsonHandshake)
	hc.poll()

	// A newer poll replaces the waiting one, which gets 204.
	older := make(chan httpResult, 1)
	go func() { older <- hc.poll() }()
	c := h.connByID(n.ConnectionID)
	waitFor(t, "the older poll to wait", func() bool { return c.lp.IdleFor(h.now()) == 0 })
	newer := make(chan httpResult, 1)
	go func() { newer <- hc.poll() }()
	(<-older).expect(t, "replaced poll", http.StatusNoContent, "")

	// DELETE ends the connection: the waiting poll gets 204.
	hc.delete().expect(t, "DELETE", http.StatusAccepted, "")
	(<-newer).expect(t, "poll when deleted", http.StatusNoContent, "")
	waitFor(t, "the connection to end", func() bool { return h.tokens.len() == 0 })
	hc.poll().expect(t, "poll after the end", http.StatusNotFound, "No Connection with that ID")
	hc.post(`{"type":6}`+"\x1e").expect(t, "POST after the end", http.StatusNotFound, "No Connection with that ID")
	if got := testutil.ToFloat64(h.metrics.connections); got != 0 {
		t.Fatalf("connections = %v", got)
	}
}

func checkPollHeaders(t *testing.T, r httpResult, contentType string) {
	t.Helper()
	for k, v := range map[string]string{"Content-Type": contentType, "Long-Running": "true", "Cache-Control": "no-cache, no-store", "Pragma": "no-cache"} {
		if got := r.header.Get(k); got != v {
			t.Errorf("poll header %s = %q, want %q", k, got, v)
		}
	}
}

func TestDeleteOnlyEndsLongPolling(t *testing.T) {
	_, srv, _ := startHub(t, Options{})
	n := negotiate(t, srv.URL())
	hc := newHTTPConn(t, srv.URL(), n.ConnectionToken)
	hc.openSSE()
	waitFor(t, "the stream to attach", func() bool { _, _, st := srvHub(srv).tokens.lookup(n.ConnectionToken); return st == http.StatusOK })
	hc.delete().expect(t, "DELETE of SSE", http.StatusBadRequest, "Cannot terminate this connection using the DELETE endpoint.")
	hc.do(http.MethodGet, nil, "text/event-stream").expect(t, "second stream", http.StatusConflict, errMsgAlreadyRunning)
}

func srvHub(s *Server) *Hub { return s.hub }

func TestHubCloseReachesLongPollingClients(t *testing.T) {
	h, srv, _ := startHub(t, Options{})
	n := negotiate(t, srv.URL())
	hc := newHTTPConn(t, srv.URL(), n.ConnectionToken)
	hc.poll()
	hc.post(jsonHandshake)
	hc.poll()
	closed := make(chan struct{})
	go func() { defer close(closed); h.Close() }()
	hc.pollFor().expect(t, "poll during Close", http.StatusOK, `{"type":7}`+"\x1e")
	hc.poll().expect(t, "last poll", http.StatusNoContent, "")
	<-closed
}

func TestLimitsApplyOnHTTPTransports(t *testing.T) {
	t.Run("handshake timeout on SSE", func(t *testing.T) {
		h, srv, _ := startHub(t, Options{HandshakeTimeout: 100 * time.Millisecond})
		n := negotiate(t, srv.URL())
		s := newHTTPConn(t, srv.URL(), n.ConnectionToken).openSSE()
		if rest, err := io.ReadAll(s.br); err != nil || string(rest) != ":\r\n" {
			t.Fatalf("stream %q %v, want it to end after the opening comment", rest, err)
		}
		waitFor(t, "the token to be released", func() bool { return h.tokens.len() == 0 })
	})
	t.Run("client timeout on Long Polling", func(t *testing.T) {
		h, srv, _ := startHub(t, Options{KeepAliveInterval: 20 * time.Millisecond, ClientTimeout: 200 * time.Millisecond, PollTimeout: 50 * time.Millisecond})
		n := negotiate(t, srv.URL())
		hc := newHTTPConn(t, srv.URL(), n.ConnectionToken)
		hc.poll()
		hc.post(jsonHandshake)
		// Polling keeps the connection alive though the client sends nothing,
		// and no keep-alive Pings are spent on it.
		deadline := time.Now().Add(400 * time.Millisecond)
		for time.Now().Before(deadline) {
			if r := hc.poll(); r.status != http.StatusOK || r.body != "" && r.body != "{}\x1e"+onConnectedRecord(n.ConnectionID) {
				t.Fatalf("poll got %d %q", r.status, r.body)
			}
		}
		// Without polls it times out.
		waitFor(t, "the silent client to be closed", func() bool { return h.tokens.len() == 0 })
		hc.post(`{"type":6}`+"\x1e").expect(t, "POST after the timeout", http.StatusNotFound, errMsgUnknownID)
	})
	t.Run("maximum message size on Long Polling", func(t *testing.T) {
		_, srv, _ := startHub(t, Options{MaxMessageSize: 1024})
		n := negotiate(t, srv.URL())
		hc := newHTTPConn(t, srv.URL(), n.ConnectionToken)
		hc.poll()
		hc.post(jsonHandshake)
		hc.poll()
		hc.post(paddedEcho(1025)+"\x1e").expect(t, "oversize POST", http.StatusOK, "")
		hc.pollFor().expect(t, "poll", http.StatusOK,
			`{"type":7,"error":"Connection closed with an error. The maximum message size of 1024B was exceeded."}`+"\x1e")
		hc.poll().expect(t, "last poll", http.StatusNoContent, "")
	})
}

// A Long Polling client that stops polling is a slow consumer like any
// other: at most a buffer of output waits for it, then its send queue
// fills and it is dropped; when it polls again it collects what was
// buffered, the Close, and a 204.
func TestLongPollingSlowConsumer(t *testing.T) {
	_, srv, _ := startHub(t, Options{SendQueueSize: 4})
	n := negotiate(t, srv.URL())
	slow := newHTTPConn(t, srv.URL(), n.ConnectionToken)
	slow.poll()
	slow.post(jsonHandshake)
	slow.poll()
	fast := connect(t, srv)
	payload := `{"blob":"` + strings.Repeat("b", 16*1024) + `"}`
	for sent := 0; ; sent++ {
		if sent > 1000 {
			t.Fatal("the client that stopped polling was never dropped")
		}
		fast.send(`{"type":1,"target":"Broadcast","arguments":[` + payload + `]}`)
		fast.nextNonPingRecord()
		if r := newHTTPConn(t, srv.URL(), n.ConnectionToken).do(http.MethodPost, strings.NewReader(`{"type":6}`+"\x1e"), ""); r.status == http.StatusNotFound {
			break // its reader stopped: the connection is closing
		}
	}
	received, closeSeen := 0, false
	for !closeSeen {
		r := slow.pollFor()
		if r.status != http.StatusOK {
			t.Fatalf("poll before the Close: %d", r.status)
		}
		if len(r.body) > transport.MaxPollOutput+len(payload)+200 {
			t.Fatalf("a poll returned %d bytes; at most about %d wait for a client", len(r.body), transport.MaxPollOutput)
		}
		for _, rec := range strings.Split(strings.TrimSuffix(r.body, "\x1e"), "\x1e") {
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
	slow.poll().expect(t, "poll after the Close", http.StatusNoContent, "")
	// Buffered: the poll buffer, one batch blocked on it, and the queue.
	if most := 2*(transport.MaxBatchBytes/len(payload)+1) + 4; received == 0 || received > most {
		t.Fatalf("the dropped client received %d broadcasts; want 1 to %d, the buffered ones", received, most)
	}
}
