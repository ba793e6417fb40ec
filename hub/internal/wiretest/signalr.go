package wiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/signalr"
)

// Negotiated is what a negotiate answered.
type Negotiated struct {
	ConnectionID    string `json:"connectionId"`
	ConnectionToken string `json:"connectionToken"`
}

// Negotiate negotiates (version 1) at baseURL.
func Negotiate(t testing.TB, baseURL string) Negotiated {
	t.Helper()
	resp, err := http.Post(baseURL+"/negotiate?negotiateVersion=1", "text/plain", nil)
	if err != nil {
		t.Fatalf("negotiate: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("negotiate status = %d", resp.StatusCode)
	}
	var n Negotiated
	if err := json.NewDecoder(resp.Body).Decode(&n); err != nil {
		t.Fatalf("negotiate body: %v", err)
	}
	return n
}

// WSURL is the WebSocket URL of baseURL, with the connection token if any.
func WSURL(baseURL, token string) string {
	u := "ws" + strings.TrimPrefix(baseURL, "http")
	if token != "" {
		u += "?id=" + token
	}
	return u
}

// RawClient is a bare WebSocket client speaking the JSON hub protocol by
// hand, so tests see exactly the bytes the hub writes.
type RawClient struct {
	T       testing.TB
	WS      *websocket.Conn
	ID      string   // from OnConnected, after Connect
	pending [][]byte // records read but not yet consumed
}

// DialRaw opens a WebSocket to url, closed when the test ends.
func DialRaw(t testing.TB, url string) *RawClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	ws, resp, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", url, err, resp)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return &RawClient{T: t, WS: ws}
}

// Connect negotiates, dials, handshakes and consumes OnConnected.
func Connect(t testing.TB, srv Server) *RawClient {
	t.Helper()
	n := Negotiate(t, srv.URL())
	c := DialRaw(t, WSURL(srv.URL(), n.ConnectionToken))
	c.Handshake()
	on := c.Next()
	if on.Type != signalr.InvocationType || on.Target != "OnConnected" || len(on.Arguments) != 1 {
		t.Fatalf("first message = %+v, want OnConnected(id)", on)
	}
	c.ID = Unquote(t, on.Arguments[0])
	if c.ID != n.ConnectionID {
		t.Fatalf("OnConnected id = %q, negotiate said %q", c.ID, n.ConnectionID)
	}
	return c
}

// Handshake asks for the JSON protocol and expects its acceptance.
func (c *RawClient) Handshake() {
	c.T.Helper()
	c.SendRaw(`{"protocol":"json","version":1}` + "\x1e")
	if got := c.NextRecord(); string(got) != "{}" {
		c.T.Fatalf("handshake response = %q, want {}", got)
	}
}

// SendRaw writes s as one text message.
func (c *RawClient) SendRaw(s string) {
	c.T.Helper()
	if err := c.WS.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
		c.T.Fatalf("write: %v", err)
	}
}

// Send writes one JSON record.
func (c *RawClient) Send(record string) { c.T.Helper(); c.SendRaw(record + "\x1e") }

// NextRecord returns the next record without its separator.
func (c *RawClient) NextRecord() []byte {
	c.T.Helper()
	rec, err := c.TryNextRecord(Timeout)
	if err != nil {
		c.T.Fatalf("reading record: %v", err)
	}
	return rec
}

// TryNextRecord is NextRecord with a timeout of its own and the error.
func (c *RawClient) TryNextRecord(timeout time.Duration) ([]byte, error) {
	for len(c.pending) == 0 {
		_ = c.WS.SetReadDeadline(time.Now().Add(timeout))
		_, data, err := c.WS.ReadMessage()
		if err != nil {
			return nil, err
		}
		if data[len(data)-1] != signalr.RecordSeparator {
			return nil, errors.New("message does not end with a record separator")
		}
		c.pending = append(c.pending, bytes.Split(data[:len(data)-1], []byte{signalr.RecordSeparator})...)
	}
	rec := c.pending[0]
	c.pending = c.pending[1:]
	return rec, nil
}

// Next returns the next hub message, skipping keep-alive pings.
func (c *RawClient) Next() signalr.Message {
	c.T.Helper()
	for {
		rec := c.NextRecord()
		var m signalr.Message
		record := slices.Concat(rec, []byte{signalr.RecordSeparator})
		_, err := signalr.JSONProtocol{}.ParseMessages(record, func(read *signalr.Message) error {
			m = *read
			m.Detach() // m outlives the pooled message ParseMessages reads into
			return nil
		})
		if err != nil {
			c.T.Fatalf("parse %q: %v", rec, err)
		}
		if m.Type != signalr.PingType {
			return m
		}
	}
}

// NextNonPingRecord is Next, as raw bytes.
func (c *RawClient) NextNonPingRecord() string {
	c.T.Helper()
	for {
		rec := c.NextRecord()
		if string(rec) != `{"type":6}` {
			return string(rec)
		}
	}
}

// ExpectClosed asserts the hub closes the socket after the pending records.
func (c *RawClient) ExpectClosed() {
	c.T.Helper()
	for {
		rec, err := c.TryNextRecord(Timeout)
		if err == nil {
			if string(rec) == `{"type":6}` {
				continue
			}
			c.T.Fatalf("got %q, want the socket closed", rec)
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) || errors.Is(err, io.ErrUnexpectedEOF) || isClosedErr(err) {
			return
		}
		c.T.Fatalf("want socket closed, got %v", err)
	}
}

func isClosedErr(err error) bool {
	return err != nil && !isTimeout(err)
}

// isTimeout reports a deadline expiry.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// DialResult dials url and returns the status of the upgrade (101 when it
// succeeded) and the body of a refusal.
func DialResult(t testing.TB, url string, header http.Header) HTTPResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	ws, resp, err := websocket.DefaultDialer.DialContext(ctx, url, header)
	if err == nil {
		_ = ws.Close()
		return HTTPResult{Status: http.StatusSwitchingProtocols}
	}
	if resp == nil {
		t.Fatalf("dial: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return HTTPResult{Status: resp.StatusCode, Body: string(b)}
}

// EchoRecord is an Echo invocation carrying a benchmark payload whose blob
// has blobSize characters (the vendor's benchmark defaults to 2048).
func EchoRecord(blobSize int) []byte {
	return []byte(`{"type":1,"target":"Echo","arguments":[{"information.ConnectionId":"x",` +
		`"payload.Timestamp":1712345678901,"payload.MessageBlob":"` + strings.Repeat("A", blobSize) + `"}]}` + "\x1e")
}

// BlobSizes are the payload sizes the benchmarks measure.
var BlobSizes = []int{256, 2048}
