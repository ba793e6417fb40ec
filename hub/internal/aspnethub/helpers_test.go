package aspnethub

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/core"
)

// rig is the classic side alone on a host of its own, served on
// 127.0.0.1 for the length of the test, heartbeat running.
type rig struct {
	t    *testing.T
	hub  *Hub
	base string // http://127.0.0.1:port/signalr
}

func startRig(t *testing.T, cfg Config, host core.Config) *rig {
	t.Helper()
	host.Logger = zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	hc, err := core.NewHost(host, core.NewMetrics())
	if err != nil {
		t.Fatal(err)
	}
	h := New(hc, cfg)
	hc.Start(h.Beat)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { hc.Close(h.CloseAll); srv.Close() })
	return &rig{t: t, hub: h, base: srv.URL + h.cfg.Path}
}

var connectionData = string(aspnet.AppendConnectionData(nil, HubName))

// negotiate returns the connection token of a new connection.
func (r *rig) negotiate() aspnet.Negotiate {
	r.t.Helper()
	body, status := r.do(http.MethodGet, r.base+aspnet.PathNegotiate+"?clientProtocol=2.1&connectionData="+url.QueryEscape(connectionData), nil)
	n, err := aspnet.DecodeNegotiate(body)
	if status != http.StatusOK || err != nil {
		r.t.Fatalf("negotiate: %d %s %v", status, body, err)
	}
	return n
}

// url is the address of op for a connection with token on tr.
func (r *rig) url(op string, tr aspnet.Transport, token string, extra ...string) string {
	q := url.Values{"transport": {string(tr)}, "clientProtocol": {aspnet.ClientProtocol}, "connectionToken": {token}, "connectionData": {connectionData}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	return r.base + op + "?" + q.Encode()
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

// envelope decodes a frame that must be an envelope.
func envelope(t *testing.T, frame []byte) aspnet.Envelope {
	t.Helper()
	var e aspnet.Envelope
	if err := aspnet.DecodeEnvelope(frame, &e); err != nil {
		t.Fatalf("%q: %v", frame, err)
	}
	return e
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
