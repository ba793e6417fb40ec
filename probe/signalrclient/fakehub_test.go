package signalrclient

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

const (
	fakeConnectionID    = "public-id"
	fakeConnectionToken = "secret+token/1"
	handshakeJSON       = "{\"protocol\":\"json\",\"version\":1}\x1e"
)

// reply is one thing a fakeHub sends down: for server-sent events, bytes
// written to the stream (status endStream ends it); for long polling, the
// answer to one poll (status 0 means 200).
type reply struct {
	status int
	body   []byte
}

const endStream = -1

// seenRequest is what the fakeHub recorded of one request.
type seenRequest struct {
	method string
	query  string
	header http.Header
	body   []byte
}

// fakeHub is a hand-driven server-sent events or long-polling hub: it
// answers negotiate, accepts the handshake, and otherwise sends down only
// what the test scripts, so every status code path can be played.
type fakeHub struct {
	kind  string // TransportSSE or TransportLongPolling
	srv   *httptest.Server
	offer string // availableTransports of the negotiate answer
	quit  chan struct{}

	down        chan reply
	posts       chan []byte  // accepted POST bodies, the handshake excluded
	postStatus  atomic.Int64 // answer POSTs with this instead of 200
	postDelay   atomic.Int64 // nanoseconds each POST takes
	hangPosts   atomic.Bool  // never answer POSTs (until the client gives up)
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	noHandshake atomic.Bool // do not answer the handshake

	mu         sync.Mutex
	seen       []seenRequest // every request but the round-trip GETs
	roundTrips []seenRequest // GETs without an id, refused as ASP.NET Core does
	polls      int
	deleted    chan struct{}
	deleteOnce sync.Once
	streamGone chan struct{} // closed when the client dropped the event stream
	goneOnce   sync.Once
}

func newFakeHub(t testing.TB, kind string) *fakeHub {
	t.Helper()
	h := &fakeHub{
		kind:       kind,
		offer:      `[{"transport":"WebSockets","transferFormats":["Text","Binary"]},{"transport":"ServerSentEvents","transferFormats":["Text"]},{"transport":"LongPolling","transferFormats":["Text","Binary"]}]`,
		quit:       make(chan struct{}),
		down:       make(chan reply, 64),
		posts:      make(chan []byte, 1024),
		deleted:    make(chan struct{}),
		streamGone: make(chan struct{}),
	}
	h.srv = newLocalServer(t, http.HandlerFunc(h.serve))
	// Runs before the server's cleanup, so handlers waiting on the test
	// return and the server can close.
	t.Cleanup(func() { close(h.quit) })
	return h
}

func (h *fakeHub) url() string { return h.srv.URL + "/hub?hub=chat" }

func (h *fakeHub) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	seen := seenRequest{method: r.Method, query: r.URL.RawQuery, header: r.Header.Clone(), body: body}
	if r.Method == http.MethodGet && !r.URL.Query().Has("id") {
		h.mu.Lock()
		h.roundTrips = append(h.roundTrips, seen)
		h.mu.Unlock()
		http.Error(w, "Connection ID required", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.seen = append(h.seen, seen)
	h.mu.Unlock()
	switch {
	case strings.HasSuffix(r.URL.Path, "/negotiate"):
		io.WriteString(w, `{"negotiateVersion":1,"connectionId":"`+fakeConnectionID+`","connectionToken":"`+fakeConnectionToken+`","availableTransports":`+h.offer+`}`)
	case r.URL.Query().Get("id") != fakeConnectionToken:
		w.WriteHeader(http.StatusNotFound)
	case r.Method == http.MethodPost:
		h.servePost(w, body)
	case r.Method == http.MethodDelete:
		h.deleteOnce.Do(func() { close(h.deleted) })
		w.WriteHeader(http.StatusAccepted)
	case h.kind == TransportSSE:
		h.serveStream(w, r)
	default:
		h.servePoll(w, r)
	}
}

func (h *fakeHub) servePost(w http.ResponseWriter, body []byte) {
	n := h.inFlight.Add(1)
	defer h.inFlight.Add(-1)
	for m := h.maxInFlight.Load(); n > m && !h.maxInFlight.CompareAndSwap(m, n); m = h.maxInFlight.Load() {
	}
	if h.hangPosts.Load() {
		<-h.quit
		return
	}
	time.Sleep(time.Duration(h.postDelay.Load()))
	if code := h.postStatus.Load(); code != 0 {
		w.WriteHeader(int(code))
		return
	}
	if bytes.HasPrefix(body, []byte(`{"protocol":`)) {
		if !h.noHandshake.Load() {
			h.send("{}\x1e")
		}
		return
	}
	select {
	case h.posts <- body:
	case <-h.quit:
	}
}

func (h *fakeHub) serveStream(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if r.Context().Err() != nil {
			h.goneOnce.Do(func() { close(h.streamGone) })
		}
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache,no-store")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, ":\r\n")
	w.(http.Flusher).Flush()
	for {
		select {
		case rp := <-h.down:
			if rp.status == endStream {
				return
			}
			w.Write(rp.body)
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		case <-h.quit:
			return
		}
	}
}

func (h *fakeHub) servePoll(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.polls++
	first := h.polls == 1
	h.mu.Unlock()
	if first {
		return // 200, no data: the connection is set up
	}
	select {
	case rp := <-h.down:
		if r.Context().Err() != nil { // the client gave up on this poll
			h.down <- rp
			return
		}
		if rp.status != 0 {
			w.WriteHeader(rp.status)
		}
		w.Write(rp.body)
	case <-h.deleted:
		w.WriteHeader(http.StatusNoContent)
	case <-r.Context().Done():
	case <-h.quit:
	}
}

// send sends records down the way ASP.NET Core does: one event per
// payload for server-sent events, one poll answer for long polling.
func (h *fakeHub) send(records string) {
	if h.kind == TransportLongPolling {
		h.down <- reply{body: []byte(records)}
		return
	}
	var b bytes.Buffer
	for _, line := range strings.Split(records, "\n") {
		b.WriteString("data: " + strings.TrimSuffix(line, "\r") + "\r\n")
	}
	b.WriteString("\r\n")
	h.down <- reply{body: b.Bytes()}
}

func (h *fakeHub) sendRaw(s string) { h.down <- reply{body: []byte(s)} }
func (h *fakeHub) answer(status int, body string) {
	h.down <- reply{status: status, body: []byte(body)}
}

func (h *fakeHub) requests() []seenRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]seenRequest(nil), h.seen...)
}

// count returns how many requests of method the hub saw.
func (h *fakeHub) count(method string) int {
	n := 0
	for _, r := range h.requests() {
		if r.method == method {
			n++
		}
	}
	return n
}

// nextPost waits for the next accepted POST body.
func (h *fakeHub) nextPost(t testing.TB) string {
	t.Helper()
	select {
	case b := <-h.posts:
		return string(b)
	case <-time.After(3 * time.Second):
		t.Fatal("no POST arrived")
		return ""
	}
}

// dial connects with the hub's transport; mod may change the options.
func (h *fakeHub) dial(t testing.TB, obs clientconn.Observer, mod func(*Options)) (*Conn, error) {
	t.Helper()
	o := Options{
		URL:         h.url(),
		Transport:   h.kind,
		AccessToken: "bearer-secret",
		Settings: clientconn.Settings{
			Observer: obs,
			// A client of the test's own, so its idle connections go with it.
			HTTPClient: &http.Client{Transport: &http.Transport{}},
		},
	}
	if mod != nil {
		mod(&o)
	}
	t.Cleanup(func() {
		if tr, ok := o.HTTPClient.Transport.(*http.Transport); ok {
			tr.CloseIdleConnections()
		}
	})
	return Dial(testCtx(t, 5*time.Second), o)
}

// mustDial is dial that fails the test on error and closes at cleanup.
func (h *fakeHub) mustDial(t testing.TB, obs clientconn.Observer, mod func(*Options)) *Conn {
	t.Helper()
	c, err := h.dial(t, obs, mod)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(testCtx(t, 2*time.Second)) })
	return c
}
