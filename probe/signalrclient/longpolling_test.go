package signalrclient

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

func TestLongPollingLifecycle(t *testing.T) {
	h := newFakeHub(t, TransportLongPolling)
	obs := &recordingObserver{}
	got := make(chan string, 4)
	c, err := h.dial(t, obs, func(o *Options) {
		o.Handlers = map[string]Handler{"T": func(args []json.RawMessage) { got <- string(args[0]) }}
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Transport() != TransportLongPolling {
		t.Errorf("transport %q", c.Transport())
	}
	h.answer(http.StatusOK, "") // the server's poll timeout: poll again
	h.send("{\"type\":1,\"target\":\"T\",\"arguments\":[1]}\x1e{\"type\":1,\"target\":\"T\",\"arguments\":[2]}\x1e")
	for _, want := range []string{"1", "2"} {
		if g := <-got; g != want {
			t.Errorf("handler got %s, want %s", g, want)
		}
	}
	if err := c.Close(testCtx(t, 5*time.Second)); err != nil || c.Err() != nil {
		t.Fatalf("Close = %v, Err = %v", err, c.Err())
	}
	if got := h.nextPost(t); got != "{\"type\":7}\x1e" {
		t.Errorf("last POST %q, want the Close message", got)
	}
	checkPollRequests(t, h.requests())
	// Polls: the first, the handshake answer, the empty one, the data; then
	// Close's POST, and the DELETE and the 204 it brings, in either order.
	want := []string{"negotiate 200", "poll 200", "send 200", "poll 200", "poll 200", "poll 200", "send 200"}
	seen := obs.responses()
	if len(seen) != len(want)+2 || !reflect.DeepEqual(seen[:len(want)], want) || !sameSet(seen[len(want):], []string{"delete 202", "poll 204"}) {
		t.Errorf("observed %v, want %v then delete 202 and poll 204", seen, want)
	}
}

func sameSet(a, b []string) bool {
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	return reflect.DeepEqual(a, b)
}

// checkPollRequests checks each request carries the token and bearer
// token, each poll a cache-buster that does not go back in time, and that
// DELETE came last, after the Close message.
func checkPollRequests(t *testing.T, seen []seenRequest) {
	t.Helper()
	count := map[string]int{}
	var lastBuster int64
	deleteAfterClose := false
	for _, r := range seen[1:] {
		count[r.method]++
		if r.method == http.MethodDelete {
			deleteAfterClose = count[http.MethodPost] == 2
		}
		q, _ := url.ParseQuery(r.query)
		if q.Get("id") != fakeConnectionToken || q.Get("hub") != "chat" || r.header.Get("Authorization") != "Bearer bearer-secret" {
			t.Errorf("%s %s with auth %q", r.method, r.query, r.header.Get("Authorization"))
		}
		if r.method != http.MethodGet {
			continue
		}
		buster, err := strconv.ParseInt(q.Get("_"), 10, 64)
		if err != nil || buster < lastBuster || time.Since(time.UnixMilli(buster)) > time.Minute {
			t.Errorf("poll cache-buster %q", q.Get("_"))
		}
		lastBuster = buster
	}
	if count[http.MethodGet] != 5 || count[http.MethodPost] != 2 || count[http.MethodDelete] != 1 || !deleteAfterClose {
		t.Errorf("requests after negotiate: %v", count)
	}
}

func TestLongPollingServerEnds(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   string
	}{
		{http.StatusNoContent, "poll: HTTP 204: the server ended the connection"},
		{http.StatusNotFound, "poll: HTTP 404: the server no longer has this connection"},
		{http.StatusBadRequest, "poll: HTTP 400"},
		{http.StatusInternalServerError, "poll: HTTP 500: unexpected HTTP status"},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			h := newFakeHub(t, TransportLongPolling)
			obs := &recordingObserver{}
			c := h.mustDial(t, obs, nil)
			h.answer(tc.status, "")
			localtest.WaitDone(t, c, 3*time.Second)
			var te *TransportError
			if !errors.As(c.Err(), &te) || te.StatusCode != tc.status || te.Request != EndpointPoll || !strings.Contains(c.Err().Error(), tc.want) {
				t.Errorf("Err = %v, want %q", c.Err(), tc.want)
			}
			if got := obs.responses(); got[len(got)-1] != "poll "+strconv.Itoa(tc.status) {
				t.Errorf("observed %v", got)
			}
			if err := c.Send(testCtx(t, time.Second), "X"); !errors.Is(err, clientconn.ErrClosed) {
				t.Errorf("Send after the end: %v", err)
			}
		})
	}
}

// TestLongPollingEmptyPollsCountAsHeard keeps a connection whose server
// only ever answers with empty polls (its poll timeout) alive well past
// ServerTimeout, then lets it time out once the polls stop coming back.
func TestLongPollingEmptyPollsCountAsHeard(t *testing.T) {
	t.Parallel() // waits on timeouts; runs after the goroutine-counting tests
	h := newFakeHub(t, TransportLongPolling)
	c := h.mustDial(t, nil, func(o *Options) { o.ServerTimeout = 300 * time.Millisecond; o.KeepAliveInterval = time.Hour })
	for range 10 {
		h.answer(http.StatusOK, "")
		time.Sleep(100 * time.Millisecond)
	}
	if c.Err() != nil {
		t.Fatalf("connection ended while the server answered: %v", c.Err())
	}
	localtest.WaitDone(t, c, 3*time.Second)
	if !errors.Is(c.Err(), clientconn.ErrServerTimeout) {
		t.Errorf("Err = %v", c.Err())
	}
}

// TestLongPollingReissuesTimedOutPolls: a poll the server holds beyond
// PollTimeout is abandoned and sent again; data then still arrives.
func TestLongPollingReissuesTimedOutPolls(t *testing.T) {
	t.Parallel() // waits on timeouts; runs after the goroutine-counting tests
	h := newFakeHub(t, TransportLongPolling)
	got := make(chan string, 1)
	c := h.mustDial(t, nil, func(o *Options) {
		o.PollTimeout = 100 * time.Millisecond
		o.Handlers = map[string]Handler{"T": func(args []json.RawMessage) { got <- string(args[0]) }}
	})
	time.Sleep(450 * time.Millisecond)
	h.send("{\"type\":1,\"target\":\"T\",\"arguments\":[7]}\x1e")
	select {
	case g := <-got:
		if g != "7" {
			t.Errorf("handler got %s", g)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("data never arrived")
	}
	// The first poll and the handshake's, then one per 100 ms.
	if n := h.count(http.MethodGet); n < 5 {
		t.Errorf("%d polls, want the timed-out ones reissued", n)
	}
	if c.Err() != nil {
		t.Errorf("Err = %v", c.Err())
	}
}

func TestLongPollingFirstPollRefused(t *testing.T) {
	for _, status := range []int{http.StatusNoContent, http.StatusNotFound, http.StatusTooManyRequests} {
		srv := newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/negotiate") {
				w.Write([]byte(`{"negotiateVersion":1,"connectionId":"a","connectionToken":"b","availableTransports":[{"transport":"LongPolling","transferFormats":["Text","Binary"]}]}`))
				return
			}
			w.WriteHeader(status)
		}))
		obs := &recordingObserver{}
		_, err := Dial(testCtx(t, 5*time.Second), Options{URL: srv.URL + "/hub", Transport: "LongPolling", Settings: clientconn.Settings{Observer: obs}})
		var ce *clientconn.ConnectError
		if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTransport || ce.StatusCode != status {
			t.Errorf("status %d: err = %v", status, err)
		}
		if got := obs.responses(); !reflect.DeepEqual(got, []string{"negotiate 200", "poll " + strconv.Itoa(status)}) {
			t.Errorf("observed %v", got)
		}
	}
}

func TestLongPollingMessagePack(t *testing.T) {
	h := newFakeHub(t, TransportLongPolling)
	got := make(chan string, 1)
	c := h.mustDial(t, nil, func(o *Options) {
		o.Protocol = signalr.MessagePackProtocol{}
		o.Handlers = map[string]Handler{"T": func(args []json.RawMessage) { got <- string(args[0]) }}
	})
	msg, err := signalr.MessagePackProtocol{}.AppendMessage(nil, &signalr.Message{Type: signalr.InvocationType, Target: "T", Arguments: []json.RawMessage{raw(`"hi"`)}})
	if err != nil {
		t.Fatal(err)
	}
	h.send(string(msg) + string(msg))
	for range 2 {
		if g := <-got; g != `"hi"` {
			t.Errorf("handler got %s", g)
		}
	}
	if err := c.Send(testCtx(t, time.Second), "Echo", raw(`"x"`)); err != nil {
		t.Fatal(err)
	}
	body := h.nextPost(t)
	var parsed []signalr.Message
	if _, err := (signalr.MessagePackProtocol{}).ParseMessages([]byte(body), func(m *signalr.Message) error { parsed = append(parsed, *m); return nil }); err != nil || len(parsed) != 1 || parsed[0].Target != "Echo" {
		t.Errorf("POST body %x: %v, %+v", body, err, parsed)
	}
	for _, r := range h.requests()[1:] { // after negotiate
		if r.method == http.MethodPost && r.header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("POST Content-Type %q", r.header.Get("Content-Type"))
		}
	}
}

func TestLongPollingProtocolErrorSendsDelete(t *testing.T) {
	h := newFakeHub(t, TransportLongPolling)
	c := h.mustDial(t, nil, nil)
	h.send("not json\x1e")
	localtest.WaitDone(t, c, 3*time.Second)
	if !errors.Is(c.Err(), signalr.ErrProtocol) {
		t.Errorf("Err = %v", c.Err())
	}
	select {
	case <-h.deleted:
	case <-time.After(3 * time.Second):
		t.Error("no DELETE after the protocol error")
	}
}

// TestLongPollingCloseWhenServerIgnoresDelete: Close still returns soon
// when the outstanding poll never completes.
func TestLongPollingCloseWhenServerIgnoresDelete(t *testing.T) {
	t.Parallel() // waits on timeouts; runs after the goroutine-counting tests
	h := newFakeHub(t, TransportLongPolling)
	h.deleteOnce.Do(func() {}) // DELETE no longer releases polls
	c := h.mustDial(t, nil, nil)
	start := time.Now()
	if err := c.Close(testCtx(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("Close took %s", elapsed)
	}
	if h.count(http.MethodDelete) != 1 {
		t.Errorf("%d DELETEs", h.count(http.MethodDelete))
	}
}
