package signalrclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/hubprobe/hubprobe/throttle"
)

func TestSendStatusCodesEndTheConnection(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   string
	}{
		{http.StatusBadRequest, "send: HTTP 400: the server refused the request"},
		{http.StatusNotFound, "send: HTTP 404: the server no longer has this connection"},
		{http.StatusGone, "send: HTTP 410: the server no longer has this connection"},
		{http.StatusConflict, "send: HTTP 409: the server saw two requests of this kind at once"},
		{http.StatusInternalServerError, "send: HTTP 500: unexpected HTTP status"},
	} {
		for _, kind := range []string{TransportSSE, TransportLongPolling} {
			t.Run(kind+"/"+strconv.Itoa(tc.status), func(t *testing.T) {
				h := newFakeHub(t, kind)
				obs := &recordingObserver{}
				c := h.mustDial(t, obs, nil)
				h.postStatus.Store(int64(tc.status))
				if err := c.Send(testCtx(t, time.Second), "X"); err != nil {
					t.Fatalf("Send: %v", err) // queued; the POST fails later
				}
				localtest.WaitDone(t, c, 3*time.Second)
				var te *TransportError
				if !errors.As(c.Err(), &te) || te.StatusCode != tc.status || te.Request != EndpointSend || te.Transport != kind || !strings.Contains(c.Err().Error(), tc.want) {
					t.Errorf("Err = %v, want %q", c.Err(), tc.want)
				}
				got := obs.responses()
				if !containsString(got, "send "+strconv.Itoa(tc.status)) {
					t.Errorf("observed %v", got)
				}
				if err := c.Send(testCtx(t, time.Second), "X"); !errors.Is(err, clientconn.ErrClosed) || !errors.As(err, &te) {
					t.Errorf("Send after the failure: %v", err)
				}
			})
		}
	}
}

func TestHandshakePOSTThrottled(t *testing.T) {
	h := newFakeHub(t, TransportLongPolling)
	h.postStatus.Store(http.StatusTooManyRequests)
	_, err := h.dial(t, nil, nil)
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseHandshake || ce.StatusCode != 429 {
		t.Fatalf("err = %v", err)
	}
	if reason, ok := clientconn.ClassifyThrottle(err); !ok || reason != throttle.HTTP429 {
		t.Errorf("classified %q, %v", reason, ok)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error reveals a token: %v", err)
	}
}

// TestSendsAreBatchedOneAtATime writes from several goroutines to a hub
// whose POSTs are slow: the hub never sees two POSTs at once, every
// message arrives once and in each writer's order, and messages written
// while a POST was out share the next one.
func TestSendsAreBatchedOneAtATime(t *testing.T) {
	h := newFakeHub(t, TransportSSE)
	obs := &recordingObserver{}
	c := h.mustDial(t, obs, nil)
	h.postDelay.Store(int64(20 * time.Millisecond))
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := c.Send(testCtx(t, 5*time.Second), "M", raw(strconv.Itoa(w)), raw(strconv.Itoa(i))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	next := make([]int, writers)
	posts := 0
	for received := 0; received < writers*each; posts++ {
		body := h.nextPost(t)
		_, err := signalr.JSONProtocol{}.ParseMessages([]byte(body), func(m *signalr.Message) error {
			var w, i int
			_ = json.Unmarshal(m.Arguments[0], &w)
			_ = json.Unmarshal(m.Arguments[1], &i)
			if i != next[w] {
				return fmt.Errorf("writer %d: message %d, want %d", w, i, next[w])
			}
			next[w]++
			received++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if h.maxInFlight.Load() != 1 {
		t.Errorf("%d POSTs at once", h.maxInFlight.Load())
	}
	if posts >= writers*each/2 {
		t.Errorf("%d POSTs for %d messages: not batched", posts, writers*each)
	}
	// The last POST's answer may still be on its way.
	want := int64(writers * each * len("{\"type\":1,\"target\":\"M\",\"arguments\":[0,0]}\x1e"))
	for deadline := time.Now().Add(3 * time.Second); obs.sent.Load() < want && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if sent := obs.sent.Load(); sent < want {
		t.Errorf("observed %d bytes sent, want at least %d", sent, want)
	}
}

func TestSendTimeoutEndsConnection(t *testing.T) {
	t.Parallel() // waits on timeouts; runs after the goroutine-counting tests
	h := newFakeHub(t, TransportLongPolling)
	c := h.mustDial(t, nil, func(o *Options) { o.WriteTimeout = 200 * time.Millisecond })
	h.hangPosts.Store(true)
	if err := c.Send(testCtx(t, time.Second), "X"); err != nil {
		t.Fatal(err)
	}
	localtest.WaitDone(t, c, 3*time.Second)
	if !errors.Is(c.Err(), clientconn.ErrServerTimeout) || !strings.Contains(c.Err().Error(), "no answer within 200ms") {
		t.Errorf("Err = %v", c.Err())
	}
}

func TestWritersWaitWhileBatchIsFull(t *testing.T) {
	t.Parallel() // waits on timeouts; runs after the goroutine-counting tests
	h := newFakeHub(t, TransportSSE)
	c := h.mustDial(t, nil, nil)
	h.hangPosts.Store(true)
	big := raw(`"` + strings.Repeat("b", maxPostBatch/2) + `"`)
	ctx := testCtx(t, 5*time.Second)
	// One batch goes out (and hangs), the next fills up...
	for range 2 {
		if err := c.Send(ctx, "X", big); err != nil {
			t.Fatal(err)
		}
	}
	// ...and this writer waits for room until its context gives up, which,
	// like a cut-off socket write, ends the connection.
	start := time.Now()
	err := c.Send(testCtx(t, 200*time.Millisecond), "X", big)
	if !errors.Is(err, errWriteAborted) || time.Since(start) < 150*time.Millisecond {
		t.Errorf("Send = %v after %s", err, time.Since(start))
	}
	localtest.WaitDone(t, c, 3*time.Second)
}

func TestCheckAliveOverHTTP(t *testing.T) {
	t.Parallel() // waits on timeouts; runs after the goroutine-counting tests
	h := newFakeHub(t, TransportSSE)
	c := h.mustDial(t, nil, nil)
	if err := c.CheckAlive(testCtx(t, 5*time.Second), time.Second); err != nil {
		t.Fatalf("CheckAlive on a live hub: %v", err)
	}
	if got := h.nextPost(t); got != "{\"type\":6}\x1e" {
		t.Errorf("CheckAlive sent %q", got)
	}
	h.hangPosts.Store(true)
	err := c.CheckAlive(testCtx(t, 5*time.Second), 200*time.Millisecond)
	if !errors.Is(err, clientconn.ErrServerTimeout) || !strings.Contains(err.Error(), "half-open") {
		t.Errorf("CheckAlive on a stuck hub: %v", err)
	}
	localtest.WaitDone(t, c, 3*time.Second)
}

func TestKeepAlivePingsOverPOST(t *testing.T) {
	h := newFakeHub(t, TransportLongPolling)
	h.mustDial(t, nil, func(o *Options) { o.KeepAliveInterval = 50 * time.Millisecond })
	for range 2 {
		if got := h.nextPost(t); got != "{\"type\":6}\x1e" {
			t.Errorf("POST %q, want a Ping", got)
		}
	}
}

// TestHTTPTransportsLeaveNothingRunning ends connections every way (Close,
// the server ending them, a failed send, a protocol error) and checks no
// goroutine is left behind.
func TestHTTPTransportsLeaveNothingRunning(t *testing.T) {
	for _, kind := range []string{TransportSSE, TransportLongPolling} {
		var hubs [4]*fakeHub
		for i := range hubs {
			hubs[i] = newFakeHub(t, kind)
		}
		client := &http.Client{Transport: &http.Transport{}}
		baseline := runtime.NumGoroutine()
		dial := func(h *fakeHub) *Conn {
			c, err := h.dial(t, nil, func(o *Options) { o.HTTPClient = client })
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		c := dial(hubs[0])
		if err := c.Send(testCtx(t, time.Second), "X"); err != nil {
			t.Fatal(err)
		}
		hubs[0].nextPost(t)
		if err := c.Close(testCtx(t, 5*time.Second)); err != nil {
			t.Error(err)
		}

		c = dial(hubs[1])
		if kind == TransportSSE {
			hubs[1].answer(endStream, "")
		} else {
			hubs[1].answer(http.StatusNoContent, "")
		}
		localtest.WaitDone(t, c, 3*time.Second)

		c = dial(hubs[2])
		hubs[2].postStatus.Store(http.StatusNotFound)
		_ = c.Send(testCtx(t, time.Second), "X")
		localtest.WaitDone(t, c, 3*time.Second)

		c = dial(hubs[3])
		hubs[3].send("garbage\x1e")
		localtest.WaitDone(t, c, 3*time.Second)

		client.CloseIdleConnections()
		localtest.CheckNoLeak(t, baseline)
	}
}
