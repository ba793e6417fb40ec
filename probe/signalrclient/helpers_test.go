package signalrclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn/clientconntest"
	"github.com/hubprobe/hubprobe/signalr"
)

// readMessage decodes the one JSON record of data, its separator
// included, as the connection's reader does, into a message of its own.
func readMessage(data []byte) (signalr.Message, error) {
	var m signalr.Message
	rest, err := signalr.JSONProtocol{}.ParseMessages(data, func(read *signalr.Message) error {
		m = *read
		m.Detach()
		return nil
	})
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("%q is not one whole record", data)
	}
	return m, err
}

// recordingObserver keeps everything a connection reports.
type recordingObserver struct {
	clientconntest.Timings
	mu       sync.Mutex
	codes    []string // "endpoint code"
	sent     atomic.Int64
	received atomic.Int64
	frames   atomic.Int64 // frames received
}

func (o *recordingObserver) HTTPResponse(endpoint string, code int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.codes = append(o.codes, endpoint+" "+strconv.Itoa(code))
}

func (o *recordingObserver) BytesSent(n int) { o.sent.Add(int64(n)) }

func (o *recordingObserver) BytesReceived(n int) {
	o.received.Add(int64(n))
	o.frames.Add(1)
}

func (o *recordingObserver) responses() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.codes...)
}

// testCtx bounds every test in time.
func testCtx(t testing.TB, d time.Duration) context.Context { return localtest.Ctx(t, d) }

// newLocalServer serves h on 127.0.0.1 only.
func newLocalServer(t testing.TB, h http.Handler) *httptest.Server { return localtest.Server(t, h) }

var testUpgrader = websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 1024}

// rawHub is a hand-driven WebSocket server for fault tests: each accepted
// socket is given to script, which plays the hub's part byte by byte.
type rawHub struct {
	srv      *httptest.Server
	requests chan *http.Request // upgrade requests, in order
	finished sync.WaitGroup
}

func newRawHub(t testing.TB, script func(t testing.TB, ws *websocket.Conn)) *rawHub {
	t.Helper()
	h := &rawHub{requests: make(chan *http.Request, 16)}
	h.srv = newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := testUpgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		h.finished.Add(1)
		defer h.finished.Done()
		defer ws.Close()
		select {
		case h.requests <- r:
		default:
		}
		script(t, ws)
	}))
	t.Cleanup(h.finished.Wait)
	return h
}

func (h *rawHub) url() string { return "ws" + strings.TrimPrefix(h.srv.URL, "http") + "/hub" }

// readHandshake consumes the client's handshake request and checks it.
func readHandshake(t testing.TB, ws *websocket.Conn) bool {
	t.Helper()
	_, data, err := ws.ReadMessage()
	if err != nil {
		t.Errorf("reading handshake: %v", err)
		return false
	}
	if string(data) != "{\"protocol\":\"json\",\"version\":1}\x1e" {
		t.Errorf("handshake request = %q", data)
		return false
	}
	return true
}

func writeText(ws *websocket.Conn, s string) error {
	return ws.WriteMessage(websocket.TextMessage, []byte(s))
}

// acceptHandshake reads the handshake and answers {}.
func acceptHandshake(t testing.TB, ws *websocket.Conn) bool {
	t.Helper()
	return readHandshake(t, ws) && writeText(ws, "{}\x1e") == nil
}

// drainUntilClosed reads until the client goes away.
func drainUntilClosed(ws *websocket.Conn) {
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			return
		}
	}
}

// dialRaw connects to a rawHub without negotiation.
func dialRaw(t *testing.T, h *rawHub, mod func(*Options)) (*Conn, error) {
	t.Helper()
	o := Options{URL: h.url(), SkipNegotiation: true}
	if mod != nil {
		mod(&o)
	}
	return Dial(testCtx(t, 5*time.Second), o)
}

// writeTurnFree reports whether no writer holds c's write turn, taking the
// turn and handing it back when it is free.
func writeTurnFree(c *Conn) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if c.state.AcquireWrite(ctx) != nil {
		return false
	}
	c.state.ReleaseWrite()
	return true
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }
