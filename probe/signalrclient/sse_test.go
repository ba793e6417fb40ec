package signalrclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/hubprobe/hubprobe/throttle"
)

func TestSSEConnectInvokeAndClose(t *testing.T) {
	h := newFakeHub(t, TransportSSE)
	obs := &recordingObserver{}
	c, err := h.dial(t, obs, func(o *Options) { o.Headers = http.Header{"X-Probe": {"1"}} })
	if err != nil {
		t.Fatal(err)
	}
	if c.Transport() != TransportSSE || c.ConnectionID() != fakeConnectionID {
		t.Errorf("transport %q, connection id %q", c.Transport(), c.ConnectionID())
	}
	ctx := testCtx(t, 5*time.Second)
	result := make(chan string, 1)
	go func() {
		r, err := c.Invoke(ctx, "Add", raw("1"), raw("2"))
		result <- string(r) + " " + errString(err)
	}()
	if got := h.nextPost(t); got != "{\"type\":1,\"invocationId\":\"1\",\"target\":\"Add\",\"arguments\":[1,2]}\x1e" {
		t.Fatalf("POST body %q", got)
	}
	h.send("{\"type\":3,\"invocationId\":\"1\",\"result\":3}\x1e")
	if got := <-result; got != "3 <nil>" {
		t.Errorf("Invoke = %s", got)
	}
	if err := c.Close(ctx); err != nil || c.Err() != nil {
		t.Fatalf("Close = %v, Err = %v", err, c.Err())
	}
	if got := h.nextPost(t); got != "{\"type\":7}\x1e" {
		t.Errorf("last POST %q, want the Close message", got)
	}
	select {
	case <-h.streamGone:
	case <-time.After(3 * time.Second):
		t.Error("the event stream was not dropped")
	}
	checkSSERequests(t, h.requests())
	want := []string{"negotiate 200", "sse 200", "send 200", "send 200", "send 200"}
	if got := obs.responses(); !reflect.DeepEqual(got, want) {
		t.Errorf("observed %v, want %v", got, want)
	}
}

// checkSSERequests checks what an SSE client sent: no DELETE (dropping the
// stream ends the connection), the token in id=, the caller's headers and
// bearer token everywhere, text/plain POSTs.
func checkSSERequests(t *testing.T, seen []seenRequest) {
	t.Helper()
	var methods []string
	for _, r := range seen[1:] {
		methods = append(methods, r.method)
		if r.query != "hub=chat&id=secret%2Btoken%2F1" {
			t.Errorf("%s query %q", r.method, r.query)
		}
		if r.header.Get("Authorization") != "Bearer bearer-secret" || r.header.Get("X-Probe") != "1" {
			t.Errorf("%s headers %v", r.method, r.header)
		}
		switch r.method {
		case http.MethodGet:
			if r.header.Get("Accept") != "text/event-stream" {
				t.Errorf("GET Accept %q", r.header.Get("Accept"))
			}
		case http.MethodPost:
			if r.header.Get("Content-Type") != "text/plain;charset=UTF-8" {
				t.Errorf("POST Content-Type %q", r.header.Get("Content-Type"))
			}
		}
	}
	if strings.Join(methods, " ") != "GET POST POST POST" {
		t.Errorf("requests after negotiate: %v", methods)
	}
	if string(seen[2].body) != handshakeJSON {
		t.Errorf("first POST %q, want the handshake", seen[2].body)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestSSEEventFraming sends records the ways an event stream may carry
// them: split across writes, with comments, CRLF, LF or CR line ends, a
// record spread over several data lines, several records in one event, a
// named event (ignored) and a record split across two events.
func TestSSEEventFraming(t *testing.T) {
	h := newFakeHub(t, TransportSSE)
	got := make(chan string, 16)
	c := h.mustDial(t, nil, func(o *Options) {
		o.Handlers = map[string]Handler{"T": func(args []json.RawMessage) { got <- string(args[0]) }}
	})
	for _, part := range []string{
		": a comment\r\n",
		"data: {\"type\":1,\"target\":\"T\",\"argu",
		"ments\":[1]}\x1e\r",
		"\n\r\n",
		"data: {\"type\":1,\"target\":\"T\",\ndata: \"arguments\":[2]}\x1e\n\n",
		"data:{\"type\":1,\"target\":\"T\",\"arguments\":[3]}\x1e{\"type\":1,\"target\":\"T\",\"arguments\":[4]}\x1e\r\r",
		"event: other\ndata: {\"type\":1,\"target\":\"T\",\"arguments\":[99]}\x1e\n\n",
		"id: 7\nretry: 10\ndata: {\"type\":1,\"target\":\"T\",\"argu\n\n",
		"data: ments\":[5]}\x1e\n\n",
	} {
		h.sendRaw(part)
	}
	for _, want := range []string{"1", "2", "3", "4", "5"} {
		select {
		case g := <-got:
			if g != want {
				t.Errorf("handler got %s, want %s", g, want)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("handler never got %s", want)
		}
	}
	if c.Err() != nil {
		t.Errorf("connection failed: %v", c.Err())
	}
}

func TestSSEStreamEndClosesConnection(t *testing.T) {
	h := newFakeHub(t, TransportSSE)
	c := h.mustDial(t, nil, nil)
	ctx := testCtx(t, 5*time.Second)
	invoked := make(chan error, 1)
	go func() {
		_, err := c.Invoke(ctx, "Slow")
		invoked <- err
	}()
	h.nextPost(t)
	h.answer(endStream, "")
	localtest.WaitDone(t, c, 3*time.Second)
	var te *TransportError
	if !errors.As(c.Err(), &te) || te.Transport != TransportSSE || !strings.Contains(te.Error(), "ended the event stream") {
		t.Errorf("Err = %v, want the stream's end", c.Err())
	}
	if err := <-invoked; !errors.Is(err, clientconn.ErrClosed) || !errors.As(err, &te) {
		t.Errorf("pending Invoke: %v", err)
	}
}

func TestSSEOversizedEventIsProtocolError(t *testing.T) {
	h := newFakeHub(t, TransportSSE)
	c := h.mustDial(t, nil, func(o *Options) { o.MaxMessageSize = 64 })
	h.sendRaw("data: " + strings.Repeat("x", 40) + "\ndata: " + strings.Repeat("y", 40) + "\n")
	localtest.WaitDone(t, c, 3*time.Second)
	if !errors.Is(c.Err(), signalr.ErrProtocol) || !strings.Contains(c.Err().Error(), "larger than 64 bytes") {
		t.Errorf("Err = %v", c.Err())
	}
}

func TestSSEEndlessCommentIsProtocolError(t *testing.T) {
	h := newFakeHub(t, TransportSSE)
	c := h.mustDial(t, nil, func(o *Options) { o.MaxMessageSize = 100 })
	h.sendRaw(":" + strings.Repeat("z", 200))
	localtest.WaitDone(t, c, 3*time.Second)
	if !errors.Is(c.Err(), signalr.ErrProtocol) || !strings.Contains(c.Err().Error(), "line longer than") {
		t.Errorf("Err = %v", c.Err())
	}
}

func TestSSEServerTimeout(t *testing.T) {
	t.Parallel() // waits on timeouts; runs after the goroutine-counting tests
	h := newFakeHub(t, TransportSSE)
	c := h.mustDial(t, nil, func(o *Options) { o.ServerTimeout = 200 * time.Millisecond; o.KeepAliveInterval = time.Hour })
	localtest.WaitDone(t, c, 3*time.Second)
	if !errors.Is(c.Err(), clientconn.ErrServerTimeout) || !strings.Contains(c.Err().Error(), "nothing received for 200ms") {
		t.Errorf("Err = %v", c.Err())
	}
}

func TestSSEHandshakeTimeout(t *testing.T) {
	t.Parallel() // waits on timeouts; runs after the goroutine-counting tests
	h := newFakeHub(t, TransportSSE)
	h.noHandshake.Store(true)
	_, err := h.dial(t, nil, func(o *Options) { o.HandshakeTimeout = 200 * time.Millisecond })
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTimeout || !strings.Contains(err.Error(), "handshake: no response after") {
		t.Errorf("err = %v", err)
	}
}

func TestSSEStreamRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		status  int
		want    string
	}{
		{"not found", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", 404) }, 404, "HTTP 404"},
		{"throttled", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "Connection count reaches limit.", http.StatusTooManyRequests)
		}, 429, "HTTP 429"},
		{"not an event stream", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) }, 200, `Content-Type "text/plain; charset=utf-8"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/negotiate") {
					w.Write([]byte(`{"negotiateVersion":1,"connectionId":"a","connectionToken":"b","availableTransports":[{"transport":"ServerSentEvents","transferFormats":["Text"]}]}`))
					return
				}
				tc.handler(w, r)
			}))
			_, err := Dial(testCtx(t, 5*time.Second), Options{URL: srv.URL + "/hub", Transport: "ServerSentEvents"})
			var ce *clientconn.ConnectError
			if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTransport || ce.StatusCode != tc.status || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v", err)
			}
			if tc.status == 429 {
				if reason, ok := clientconn.ClassifyThrottle(err); !ok || reason != throttle.ConnectionLimit {
					t.Errorf("classified %q, %v", reason, ok)
				}
			}
		})
	}
}

func TestMessagePackOverSSERefusedBeforeConnecting(t *testing.T) {
	h := newFakeHub(t, TransportSSE)
	for _, mod := range []func(*Options){
		func(o *Options) { o.Protocol = signalr.MessagePackProtocol{} },
		func(o *Options) {
			o.Protocol = signalr.MessagePackProtocol{}
			o.Transport = TransportWebSockets
			o.FallbackTransports = []string{"sse"}
		},
	} {
		_, err := h.dial(t, nil, mod)
		if err == nil || err.Error() != "probe: messagepack needs a binary transport; server-sent events carry text only" {
			t.Errorf("err = %v", err)
		}
	}
	if n := len(h.requests()); n != 0 {
		t.Errorf("%d requests made", n)
	}
}

func TestHTTPTransportsNeedNegotiate(t *testing.T) {
	_, err := Dial(context.Background(), Options{URL: "http://127.0.0.1:1/hub", Transport: TransportLongPolling, SkipNegotiation: true})
	if err == nil || !strings.Contains(err.Error(), "needs negotiate") {
		t.Errorf("err = %v", err)
	}
}
