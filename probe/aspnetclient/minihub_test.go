package aspnetclient_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/aspnet"
)

// miniHub is just enough of a classic ASP.NET SignalR server at /signalr
// for the client's tests, on every transport: Echo(ticks, payload)
// answers Measure(ticks, payload) to the caller, Fail answers an error,
// and its knobs make it misbehave in one chosen way.
type miniHub struct {
	srv *httptest.Server

	negotiateBody   string // when set, negotiate answers it as is
	tryWebSockets   bool
	disconnectAfter int32 // after this many echoes, a D message (0: never)
	dropAfter       int32 // after this many echoes, drop the transport (0: never)
	refuseReconnect bool
	stallStream     bool          // SSE and Forever Frame: send nothing after the headers
	holdSends       chan struct{} // when set, each /send waits until it is closed
	longPollDelay   int           // when set, each poll's answer carries it as L, at once

	mu      sync.Mutex
	conns   map[string]*miniConn
	echoes  atomic.Int32
	aborts  atomic.Int32
	pings   atomic.Int32
	reconns atomic.Int32

	sendsOpen, maxSendsOpen atomic.Int32
	polls                   []time.Time // when each poll arrived, under mu
}

type miniConn struct {
	out  chan string // hub messages (items of M) for the client
	drop chan struct{}
}

func newMiniHub(t *testing.T, configure func(*miniHub)) *miniHub {
	h := &miniHub{tryWebSockets: true, conns: map[string]*miniConn{}}
	if configure != nil {
		configure(h)
	}
	h.srv = httptest.NewServer(http.StripPrefix("/signalr", http.HandlerFunc(h.serve)))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *miniHub) url() string { return h.srv.URL + "/signalr" }

func (h *miniHub) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/negotiate":
		h.negotiate(w)
	case "/ping":
		h.pings.Add(1)
		fmt.Fprint(w, `{"Response":"pong"}`)
	case "/start":
		fmt.Fprint(w, `{"Response":"started"}`)
	case "/abort":
		h.aborts.Add(1)
	case "/send":
		data := r.FormValue("data")
		h.hold(r)
		fmt.Fprint(w, h.invoke(h.conn(r), data))
	case "/connect", "/reconnect", "/poll":
		h.receive(w, r)
	default:
		http.NotFound(w, r)
	}
}

// hold keeps a send open until holdSends is closed, counting how many are
// open at once.
func (h *miniHub) hold(r *http.Request) {
	if h.holdSends == nil {
		return
	}
	n := h.sendsOpen.Add(1)
	defer h.sendsOpen.Add(-1)
	for m := h.maxSendsOpen.Load(); n > m && !h.maxSendsOpen.CompareAndSwap(m, n); m = h.maxSendsOpen.Load() {
	}
	select {
	case <-h.holdSends:
	case <-r.Context().Done():
	}
}

func (h *miniHub) negotiate(w http.ResponseWriter) {
	if h.negotiateBody != "" {
		fmt.Fprint(w, h.negotiateBody)
		return
	}
	id := strconv.Itoa(len(h.conns) + 1)
	h.mu.Lock()
	h.conns["tok-"+id] = &miniConn{out: make(chan string, 1024), drop: make(chan struct{}, 1)}
	h.mu.Unlock()
	fmt.Fprintf(w, `{"Url":"/signalr","ConnectionToken":"tok-%s","ConnectionId":"id-%s","KeepAliveTimeout":20.0,"DisconnectTimeout":5.0,"ConnectionTimeout":110.0,"TryWebSockets":%t,"ProtocolVersion":"2.1","TransportConnectTimeout":5.0,"LongPollDelay":0.0}`,
		id, id, h.tryWebSockets)
}

func (h *miniHub) conn(r *http.Request) *miniConn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns[r.URL.Query().Get("connectionToken")]
}

// invoke runs one hub invocation of the client's and returns its result,
// which the server writes as the answer to /send, or over WebSockets as
// a frame of its own.
func (h *miniHub) invoke(c *miniConn, data string) string {
	var inv struct {
		H, M string
		A    []json.RawMessage
		I    json.RawMessage
	}
	if c == nil || json.Unmarshal([]byte(data), &inv) != nil {
		return ""
	}
	id := strings.Trim(string(inv.I), `"`)
	switch inv.M {
	case "Echo":
		n := h.echoes.Add(1)
		args, _ := json.Marshal(inv.A)
		c.out <- fmt.Sprintf(`{"H":"Signalrbench","M":"Measure","A":%s}`, args)
		switch n {
		case h.disconnectAfter:
			c.out <- "D"
		case h.dropAfter:
			c.drop <- struct{}{}
		}
		return fmt.Sprintf(`{"I":%q}`, id)
	case "Fail":
		return fmt.Sprintf(`{"I":%q,"E":"no such method"}`, id)
	}
	return fmt.Sprintf(`{"I":%q,"R":%q}`, id, inv.M)
}

// envelope wraps hub messages as the server does; "D" becomes the
// disconnect flag.
func envelope(cursor int, msgs []string, init bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"C":"c-%d",`, cursor)
	if init {
		b.WriteString(`"S":1,`)
	}
	if i := slices.Index(msgs, "D"); i >= 0 {
		b.WriteString(`"D":1,`)
		msgs = slices.Delete(slices.Clone(msgs), i, i+1)
	}
	b.WriteString(`"M":[` + strings.Join(msgs, ",") + `]}`)
	return b.String()
}

func (h *miniHub) receive(w http.ResponseWriter, r *http.Request) {
	c := h.conn(r)
	reconnect := r.URL.Path == "/reconnect"
	if reconnect {
		h.reconns.Add(1)
	}
	if c == nil || reconnect && h.refuseReconnect {
		http.Error(w, "Connection was disconnected.", http.StatusForbidden)
		return
	}
	switch r.URL.Query().Get("transport") {
	case "webSockets":
		h.webSocket(w, r, c, !reconnect)
	case "longPolling":
		h.longPoll(w, r, c, r.URL.Path == "/connect")
	default:
		h.stream(w, r, c, !reconnect)
	}
}

var upgrader = websocket.Upgrader{}

func (h *miniHub) webSocket(w http.ResponseWriter, r *http.Request, c *miniConn, init bool) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	go func() {
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			c.out <- h.invoke(c, string(data)) // a bare result, in its own frame
		}
	}()
	if init {
		_ = ws.WriteMessage(websocket.TextMessage, []byte(envelope(0, nil, true)))
	}
	h.pump(r, c, func(cursor int, msg string) error {
		frame := envelope(cursor, []string{msg}, false)
		if strings.HasPrefix(msg, `{"I"`) {
			frame = msg
		}
		return ws.WriteMessage(websocket.TextMessage, []byte(frame))
	})
}

// pump writes each hub message for c in its own envelope until the
// request ends or the hub drops the transport.
func (h *miniHub) pump(r *http.Request, c *miniConn, write func(cursor int, msg string) error) {
	for cursor := 1; ; cursor++ {
		select {
		case msg := <-c.out:
			if write(cursor, msg) != nil {
				return
			}
		case <-c.drop:
			return
		case <-r.Context().Done():
			return
		}
	}
}

func (h *miniHub) stream(w http.ResponseWriter, r *http.Request, c *miniConn, init bool) {
	ff := r.URL.Query().Get("transport") == "foreverFrame"
	if ff {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		_, _ = w.Write(aspnet.AppendForeverFramePreamble(nil, 1))
	} else {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, aspnet.SSEInitialized)
	}
	w.(http.Flusher).Flush()
	if h.stallStream {
		<-r.Context().Done()
		return
	}
	write := func(cursor int, msg string) error {
		env := envelope(cursor, []string{msg}, false)
		if msg == "init" {
			env = envelope(0, nil, true)
		}
		var err error
		if ff {
			_, err = w.Write(aspnet.AppendForeverFrameScript(nil, []byte(env)))
		} else {
			_, err = w.Write(aspnet.AppendSSEData(nil, []byte(env)))
		}
		w.(http.Flusher).Flush()
		return err
	}
	if init {
		_ = write(0, "init")
	}
	h.pump(r, c, write)
}

func (h *miniHub) longPoll(w http.ResponseWriter, r *http.Request, c *miniConn, connect bool) {
	if connect {
		fmt.Fprint(w, envelope(0, nil, true))
		return
	}
	if h.longPollDelay > 0 {
		h.mu.Lock()
		h.polls = append(h.polls, time.Now())
		h.mu.Unlock()
		fmt.Fprintf(w, `{"C":"c-1","L":%d,"M":[]}`, h.longPollDelay)
		return
	}
	var msgs []string
	select {
	case msg := <-c.out:
		msgs = append(msgs, msg)
	case <-c.drop:
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	case <-time.After(time.Second):
	case <-r.Context().Done():
		return
	}
	for len(c.out) > 0 && len(msgs) < 100 {
		msgs = append(msgs, <-c.out)
	}
	fmt.Fprint(w, envelope(1, msgs, false))
}
