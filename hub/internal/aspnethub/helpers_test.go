package aspnethub

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/core"
)

// rig is the classic side alone on a host of its own, served on
// 127.0.0.1 for the length of the test, heartbeat running.
type rig struct {
	t      *testing.T
	hub    *Hub
	origin string // http://127.0.0.1:port
	base   string // origin + the endpoint's path: /signalr, or /aspnetclient
	// token, when set, is sent as a bearer header on every request, and as
	// access_token on the URLs of WebSockets and Server-Sent Events.
	token string
	query url.Values // added to every request, as a redirect's query is
}

func startRig(t *testing.T, cfg Config, host core.Config) *rig {
	t.Helper()
	return startRigListening(t, cfg, host, nil)
}

// startRigListening is startRig with the server's listener wrapped by wrap
// (when not nil), for a test that watches the sockets.
func startRigListening(t *testing.T, cfg Config, host core.Config, wrap func(net.Listener) net.Listener) *rig {
	t.Helper()
	host.Logger = zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	hc, err := core.NewHost(host, core.NewMetrics())
	if err != nil {
		t.Fatal(err)
	}
	h := New(hc, cfg)
	hc.Start(h.Beat)
	srv := httptest.NewUnstartedServer(h)
	if wrap != nil {
		srv.Listener = wrap(srv.Listener)
	}
	srv.Start()
	t.Cleanup(func() { hc.Close(h.CloseAll); srv.Close() })
	return &rig{t: t, hub: h, origin: srv.URL, base: srv.URL + h.cfg.Path}
}

var connectionData = string(aspnet.AppendConnectionData(nil, HubName))

// negotiate returns the connection token of a new connection.
func (r *rig) negotiate() aspnet.Negotiate {
	r.t.Helper()
	q := r.values(url.Values{"clientProtocol": {aspnet.ClientProtocol}, "connectionData": {connectionData}})
	body, status := r.do(http.MethodGet, r.base+aspnet.PathNegotiate+"?"+q.Encode(), nil)
	n, err := aspnet.DecodeNegotiate(body)
	if status != http.StatusOK || err != nil {
		r.t.Fatalf("negotiate: %d %s %v", status, body, err)
	}
	return n
}

// url is the address of op for a connection with token on tr.
func (r *rig) url(op string, tr aspnet.Transport, token string, extra ...string) string {
	q := r.values(url.Values{"transport": {string(tr)}, "clientProtocol": {aspnet.ClientProtocol}, "connectionToken": {token}, "connectionData": {connectionData}})
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	if r.token != "" && (tr == aspnet.WebSockets || tr == aspnet.ServerSentEvents) {
		q.Set(aspnet.QueryAccessToken, r.token)
	}
	return r.base + op + "?" + q.Encode()
}

// values is q with the rig's own query added.
func (r *rig) values(q url.Values) url.Values {
	for k, v := range r.query {
		q[k] = v
	}
	return q
}

// do makes a request bounded by five seconds and returns its body.
func (r *rig) do(method, u string, form url.Values) ([]byte, int) {
	r.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b, resp.StatusCode
}

// send invokes data over /send and returns the result frame.
func (r *rig) send(tr aspnet.Transport, token, data string) aspnet.HubResult {
	r.t.Helper()
	body, status := r.do(http.MethodPost, r.url(aspnet.PathSend, tr, token), url.Values{"data": {data}})
	var res aspnet.HubResult
	if err := aspnet.DecodeHubResult(body, &res); status != http.StatusOK || err != nil {
		r.t.Fatalf("send %s: %d %s %v", data, status, body, err)
	}
	return res
}

// openStream starts a GET whose body streams, and returns a reader over it.
func (r *rig) openStream(u string) *bufio.Reader {
	r.t.Helper()
	resp, err := http.Get(u) //nolint:noctx // the hub's close ends the stream
	if err != nil || resp.StatusCode != http.StatusOK {
		r.t.Fatalf("GET %s: %v %v", u, resp, err)
	}
	r.t.Cleanup(func() { resp.Body.Close() })
	return bufio.NewReader(resp.Body)
}

// envelope decodes a frame that must be an envelope, as the clients read
// frames.
func envelope(t *testing.T, frame []byte) aspnet.Envelope {
	t.Helper()
	var f aspnet.Frame
	if err := aspnet.DecodeFrame(frame, &f); err != nil || f.Kind != aspnet.EnvelopeFrame {
		t.Fatalf("%q: %v, want an envelope", frame, err)
	}
	return f.Envelope
}

// measureArgs returns the arguments of the Measure call message must be.
func measureArgs(t *testing.T, message []byte) string {
	t.Helper()
	var inv aspnet.Invocation
	if err := aspnet.DecodeInvocation(message, &inv); err != nil || inv.Method != measureMethod || inv.Hub != HubName {
		t.Fatalf("%s is no Measure call: %v", message, err)
	}
	parts := make([]string, len(inv.Args))
	for i, a := range inv.Args {
		parts[i] = string(a)
	}
	return strings.Join(parts, ",")
}

// eventReader reads Server-Sent Events from a stream.
type eventReader struct {
	r   *bufio.Reader
	buf []byte
}

func (e *eventReader) next(t *testing.T) string {
	t.Helper()
	for {
		if data, rest, ok := aspnet.NextSSEData(e.buf); ok {
			e.buf = rest
			return string(data)
		}
		line, err := e.r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		e.buf = append(e.buf, line...)
	}
}

// scriptReader reads a Forever Frame stream.
type scriptReader struct {
	r   *bufio.Reader
	buf []byte
}

func (s *scriptReader) more(t *testing.T) {
	t.Helper()
	line, err := s.r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("forever frame: %v", err)
	}
	s.buf = append(s.buf, line...)
}

func (s *scriptReader) preamble(t *testing.T) uint32 {
	t.Helper()
	for {
		id, rest, ok, err := aspnet.ParseForeverFramePreamble(s.buf)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			s.buf = rest
			return id
		}
		s.more(t)
	}
}

func (s *scriptReader) next(t *testing.T) []byte {
	t.Helper()
	for {
		frame, rest, ok, err := aspnet.NextForeverFrameScript(s.buf)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			s.buf = rest
			return append([]byte(nil), frame...)
		}
		s.more(t)
	}
}

// dialWebSocket connects a negotiated connection on WebSockets and reads
// its init envelope; the test's end closes it.
func (r *rig) dialWebSocket(token string) *websocket.Conn {
	r.t.Helper()
	u := "ws" + strings.TrimPrefix(r.url(aspnet.PathConnect, aspnet.WebSockets, token), "http")
	ws, resp, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		r.t.Fatalf("connect: %v %v", resp, err)
	}
	r.t.Cleanup(func() { ws.Close() })
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, init, err := ws.ReadMessage(); err != nil || !envelope(r.t, init).Initialized {
		r.t.Fatalf("init: %s %v", init, err)
	}
	return ws
}

// echoOverWebSocket invokes Echo and waits for both its result and the
// Measure call it makes.
func echoOverWebSocket(t *testing.T, ws *websocket.Conn) {
	t.Helper()
	_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"H":"signalrbench","M":"Echo","A":[42,"cGF5"],"I":0}`))
	var gotResult, gotMeasure bool
	for !gotResult || !gotMeasure {
		_, data, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var f aspnet.Frame
		if err := aspnet.DecodeFrame(data, &f); err != nil {
			t.Fatal(err)
		}
		switch {
		case f.Kind == aspnet.ResultFrame:
			gotResult = f.Result.ID == "0" && !f.Result.HasError
		case len(f.Envelope.Messages) == 1:
			gotMeasure = measureArgs(t, f.Envelope.Messages[0]) == `42,"cGF5"`
		}
	}
}
