package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

const testTimeout = 5 * time.Second

// startHub serves a fresh hub on 127.0.0.1 for the length of the test.
func startHub(t *testing.T, opts Options) (*Hub, *Server, *prometheus.Registry) {
	t.Helper()
	return startHubWithLogger(t, opts, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel))
}

// startHubWithLogger is startHub with the hub's log going to log.
func startHubWithLogger(t *testing.T, opts Options, log zerolog.Logger) (*Hub, *Server, *prometheus.Registry) {
	t.Helper()
	opts.Logger = log
	reg := prometheus.NewRegistry()
	h, err := New(opts, reg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv, err := Start(context.Background(), "127.0.0.1:0", h)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(srv.Close)
	return h, srv, reg
}

type negotiated struct {
	ConnectionID    string `json:"connectionId"`
	ConnectionToken string `json:"connectionToken"`
}

func negotiate(t *testing.T, baseURL string) negotiated {
	t.Helper()
	resp, err := http.Post(baseURL+"/negotiate?negotiateVersion=1", "text/plain", nil)
	if err != nil {
		t.Fatalf("negotiate: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("negotiate status = %d", resp.StatusCode)
	}
	var n negotiated
	if err := json.NewDecoder(resp.Body).Decode(&n); err != nil {
		t.Fatalf("negotiate body: %v", err)
	}
	return n
}

func wsURL(baseURL, token string) string {
	u := "ws" + strings.TrimPrefix(baseURL, "http")
	if token != "" {
		u += "?id=" + token
	}
	return u
}

// rawClient is a bare WebSocket client speaking the JSON hub protocol by
// hand, so tests see exactly the bytes the hub writes.
type rawClient struct {
	t       *testing.T
	ws      *websocket.Conn
	id      string
	pending [][]byte // records read but not yet consumed
}

func dialRaw(t *testing.T, url string) *rawClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ws, resp, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", url, err, resp)
	}
	c := &rawClient{t: t, ws: ws}
	t.Cleanup(func() { _ = ws.Close() })
	return c
}

// connect negotiates, dials, handshakes and consumes OnConnected.
func connect(t *testing.T, srv *Server) *rawClient {
	t.Helper()
	n := negotiate(t, srv.URL())
	c := dialRaw(t, wsURL(srv.URL(), n.ConnectionToken))
	c.handshake()
	on := c.next()
	if on.Type != signalr.InvocationType || on.Target != "OnConnected" || len(on.Arguments) != 1 {
		t.Fatalf("first message = %+v, want OnConnected(id)", on)
	}
	c.id = unquote(t, on.Arguments[0])
	if c.id != n.ConnectionID {
		t.Fatalf("OnConnected id = %q, negotiate said %q", c.id, n.ConnectionID)
	}
	return c
}

func (c *rawClient) handshake() {
	c.t.Helper()
	c.sendRaw(`{"protocol":"json","version":1}` + "\x1e")
	if got := c.nextRecord(); string(got) != "{}" {
		c.t.Fatalf("handshake response = %q, want {}", got)
	}
}

func (c *rawClient) sendRaw(s string) {
	c.t.Helper()
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// send writes one JSON record.
func (c *rawClient) send(record string) { c.t.Helper(); c.sendRaw(record + "\x1e") }

// nextRecord returns the next record without its separator.
func (c *rawClient) nextRecord() []byte {
	c.t.Helper()
	rec, err := c.tryNextRecord(testTimeout)
	if err != nil {
		c.t.Fatalf("reading record: %v", err)
	}
	return rec
}

func (c *rawClient) tryNextRecord(timeout time.Duration) ([]byte, error) {
	for len(c.pending) == 0 {
		_ = c.ws.SetReadDeadline(time.Now().Add(timeout))
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return nil, err
		}
		if data[len(data)-1] != signalr.RecordSeparator {
			return nil, errors.New("message does not end with a record separator")
		}
		for _, r := range bytes.Split(data[:len(data)-1], []byte{signalr.RecordSeparator}) {
			c.pending = append(c.pending, r)
		}
	}
	rec := c.pending[0]
	c.pending = c.pending[1:]
	return rec, nil
}

// next returns the next hub message, skipping keep-alive pings.
func (c *rawClient) next() signalr.Message {
	c.t.Helper()
	for {
		rec := c.nextRecord()
		m, err := signalr.ParseJSONMessage(rec)
		if err != nil {
			c.t.Fatalf("parse %q: %v", rec, err)
		}
		if m.Type != signalr.PingType {
			return m
		}
	}
}

// nextNonPingRecord is next, as raw bytes.
func (c *rawClient) nextNonPingRecord() string {
	c.t.Helper()
	for {
		rec := c.nextRecord()
		if string(rec) != `{"type":6}` {
			return string(rec)
		}
	}
}

// expectClosed asserts the hub closes the socket after the pending records.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	for {
		rec, err := c.tryNextRecord(testTimeout)
		if err == nil {
			if string(rec) == `{"type":6}` {
				continue
			}
			c.t.Fatalf("got %q, want the socket closed", rec)
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) || errors.Is(err, io.ErrUnexpectedEOF) || isClosedErr(err) {
			return
		}
		c.t.Fatalf("want socket closed, got %v", err)
	}
}

func isClosedErr(err error) bool {
	return err != nil && !transport.IsTimeout(err)
}

func unquote(t *testing.T, raw []byte) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("unquote %s: %v", raw, err)
	}
	return s
}

// waitFor polls cond until it holds or the test timeout passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// connByID finds a registered connection of any hub name.
func (h *Hub) connByID(id string) *conn {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, s := range h.spaces {
		if c := s.conns[id]; c != nil {
			return c
		}
	}
	return nil
}

func websocketDialer() *websocket.Dialer { return websocket.DefaultDialer }
