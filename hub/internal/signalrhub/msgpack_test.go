package signalrhub

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/signalr"
)

var mp = signalr.MessagePackProtocol{}

func mpEncode(t *testing.T, m signalr.Message) []byte {
	t.Helper()
	b, err := mp.AppendMessage(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mpDecode(t *testing.T, data []byte) []signalr.Message {
	t.Helper()
	var out []signalr.Message
	rest, err := mp.ParseMessages(data, func(m *signalr.Message) error { out = append(out, *m); return nil })
	if err != nil || len(rest) != 0 {
		t.Fatalf("decoding %x: %v (%d bytes left)", data, err, len(rest))
	}
	return out
}

func args(values ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(values))
	for i, v := range values {
		out[i] = json.RawMessage(v)
	}
	return out
}

// mpClient is a raw WebSocket client speaking MessagePack.
type mpClient struct {
	t       *testing.T
	WS      *websocket.Conn
	ID      string
	pending []signalr.Message
}

func connectMessagePack(t *testing.T, srv *wiretest.TestServer) *mpClient {
	t.Helper()
	n := wiretest.Negotiate(t, srv.URL())
	raw := wiretest.DialRaw(t, wiretest.WSURL(srv.URL(), n.ConnectionToken))
	raw.SendRaw(`{"protocol":"messagepack","version":1}` + "\x1e")
	c := &mpClient{t: t, WS: raw.WS}
	kind, data := c.Read()
	if kind != websocket.BinaryMessage || !bytes.HasPrefix(data, []byte("{}\x1e")) {
		t.Fatalf("handshake answer %d %q, want a binary frame starting with {}", kind, data)
	}
	msgs := mpDecode(t, data[3:])
	if len(msgs) != 1 || msgs[0].Target != "OnConnected" || string(msgs[0].Arguments[0]) != `"`+n.ConnectionID+`"` {
		t.Fatalf("got %+v, want OnConnected(%s)", msgs, n.ConnectionID)
	}
	c.ID = n.ConnectionID
	return c
}

func (c *mpClient) Read() (int, []byte) {
	c.t.Helper()
	_ = c.WS.SetReadDeadline(time.Now().Add(wiretest.Timeout))
	kind, data, err := c.WS.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return kind, data
}

func (c *mpClient) Send(m signalr.Message) {
	c.t.Helper()
	if err := c.WS.WriteMessage(websocket.BinaryMessage, mpEncode(c.t, m)); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next non-Ping message; every frame must be binary.
func (c *mpClient) Next() signalr.Message {
	c.t.Helper()
	for {
		for len(c.pending) > 0 {
			m := c.pending[0]
			c.pending = c.pending[1:]
			if m.Type != signalr.PingType {
				return m
			}
		}
		kind, data := c.Read()
		if kind != websocket.BinaryMessage {
			c.t.Fatalf("frame type %d, want binary", kind)
		}
		c.pending = mpDecode(c.t, data)
	}
}

func TestMessagePackOverWebSockets(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	a := connectMessagePack(t, srv)
	j := wiretest.Connect(t, srv) // a JSON client on the same hub

	a.Send(signalr.Message{Type: signalr.InvocationType, InvocationID: "1", Target: "Echo", Arguments: args(`{"payload.Timestamp":1712345678901,"s":"é","f":1.5,"n":[null,true]}`)})
	if m := a.Next(); m.Target != "RecordLatency" || string(m.Arguments[0]) != `{"payload.Timestamp":1712345678901,"s":"é","f":1.5,"n":[null,true]}` {
		t.Fatalf("echo: %+v (%s)", m, m.Arguments)
	}
	if m := a.Next(); m.Type != signalr.CompletionType || m.InvocationID != "1" || m.Result != nil || m.HasError {
		t.Fatalf("completion: %+v", m)
	}
	// Fan-out across protocols: each receiver gets its own encoding.
	a.Send(signalr.Message{Type: signalr.InvocationType, Target: "Broadcast", Arguments: args(`{"from":"mp"}`)})
	if m := a.Next(); string(m.Arguments[0]) != `{"from":"mp"}` {
		t.Fatalf("broadcast to sender: %s", m.Arguments)
	}
	if got := j.NextNonPingRecord(); got != recordLatencyRecord(`{"from":"mp"}`) {
		t.Fatalf("broadcast to JSON client: %s", got)
	}
	j.Send(`{"type":1,"target":"SendToClient","arguments":[{"information.ConnectionId":"` + a.ID + `","x":2}]}`)
	if m := a.Next(); string(m.Arguments[0]) != `{"information.ConnectionId":"`+a.ID+`","x":2}` {
		t.Fatalf("JSON to MessagePack: %s", m.Arguments)
	}
	a.Send(signalr.Message{Type: signalr.InvocationType, InvocationID: "2", Target: "GetConnectionId", Arguments: args()})
	if m := a.Next(); m.InvocationID != "2" || string(m.Result) != `"`+a.ID+`"` {
		t.Fatalf("GetConnectionId: %+v", m)
	}
}

func TestMessagePackStreamingEcho(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	a := connectMessagePack(t, srv)
	a.Send(signalr.Message{Type: signalr.StreamInvocationType, InvocationID: "s", Target: "StreamingEcho", Arguments: args(`0`), StreamIDs: []string{"u"}})
	for i, item := range []string{`{"i":1}`, `{"i":2}`} {
		a.Send(signalr.Message{Type: signalr.StreamItemType, InvocationID: "u", Item: json.RawMessage(item)})
		if m := a.Next(); m.Type != signalr.StreamItemType || m.InvocationID != "s" || string(m.Item) != item {
			t.Fatalf("item %d: %+v", i, m)
		}
	}
	a.Send(signalr.Message{Type: signalr.CompletionType, InvocationID: "u"})
	if m := a.Next(); m.Type != signalr.CompletionType || m.InvocationID != "s" || m.HasError {
		t.Fatalf("completion: %+v", m)
	}
}

func TestMessagePackLimitsAndGarbage(t *testing.T) {
	_, srv, _ := startHub(t, Config{MaxMessageSize: 1024}, core.Config{})
	a := connectMessagePack(t, srv)
	// The declared length alone is enough to refuse a message.
	if err := a.WS.WriteMessage(websocket.BinaryMessage, []byte{0x81, 0x08, 0x96}); err != nil {
		t.Fatal(err)
	}
	if m := a.Next(); m.Type != signalr.CloseType || m.Error != "Connection closed with an error. The maximum message size of 1024B was exceeded." {
		t.Fatalf("got %+v", m)
	}

	b := connectMessagePack(t, srv)
	if err := b.WS.WriteMessage(websocket.BinaryMessage, []byte{0x02, 0x91, 0x63}); err != nil {
		t.Fatal(err)
	}
	if m := b.Next(); m.Type != signalr.CloseType || m.Error != "Connection closed with an error." {
		t.Fatalf("got %+v", m)
	}
}

func TestMessagePackOverLongPolling(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	n := wiretest.Negotiate(t, srv.URL())
	hc := wiretest.NewHTTPConn(t, srv.URL(), n.ConnectionToken)
	hc.Poll().Expect(t, "first poll", http.StatusOK, "")
	hc.Post(`{"protocol":"messagepack","version":1}`+"\x1e").Expect(t, "handshake", http.StatusOK, "")
	r := hc.PollFor()
	if r.Header.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(r.Body, "{}\x1e") {
		t.Fatalf("handshake poll: %q %q", r.Header.Get("Content-Type"), r.Body)
	}
	if msgs := mpDecode(t, []byte(r.Body[3:])); len(msgs) != 1 || string(msgs[0].Arguments[0]) != `"`+n.ConnectionID+`"` {
		t.Fatalf("got %+v", msgs)
	}
	body := append(mpEncode(t, signalr.Message{Type: signalr.InvocationType, Target: "Echo", Arguments: args(`{"lp":1}`)}),
		mpEncode(t, signalr.Message{Type: signalr.InvocationType, InvocationID: "9", Target: "Echo", Arguments: args(`{"lp":2}`)})...)
	hc.Post(string(body)).Expect(t, "two messages in one POST", http.StatusOK, "")
	msgs := mpDecode(t, []byte(hc.PollFor().Body))
	if len(msgs) != 3 || string(msgs[0].Arguments[0]) != `{"lp":1}` || string(msgs[1].Arguments[0]) != `{"lp":2}` || msgs[2].InvocationID != "9" {
		t.Fatalf("got %+v", msgs)
	}
	hc.Delete().Expect(t, "DELETE", http.StatusAccepted, "")
}

// A fan-out encodes a message once per protocol in use, and every receiver
// of one protocol gets the same frame.
func TestFanoutEncodesOncePerProtocol(t *testing.T) {
	h := newHub(t, Config{}, core.Config{})
	var conns []*conn
	for i, cd := range []*codec{jsonCodec, jsonCodec, msgpackCodec, msgpackCodec} {
		c := newConn(h, nil, identity{id: string(rune('a' + i)), space: h.home})
		c.cd = cd
		conns = append(conns, c)
	}
	msg := recordLatency([]byte(`{"k":1}`))
	fo := fanout{msg: &msg}
	for _, c := range conns {
		fo.sendTo(c, false)
	}
	frames := make([]*frame, len(conns))
	for i, c := range conns {
		frames[i] = <-c.queue
	}
	if frames[0] != frames[1] || frames[2] != frames[3] || frames[0] == frames[2] {
		t.Fatalf("frames %p %p %p %p: want one per protocol", frames[0], frames[1], frames[2], frames[3])
	}
	if got := string(frames[0].b); got != recordLatencyRecord(`{"k":1}`)+"\x1e" {
		t.Fatalf("JSON frame %q", got)
	}
	if m := mpDecode(t, frames[2].b); len(m) != 1 || string(m[0].Arguments[0]) != `{"k":1}` {
		t.Fatalf("MessagePack frame %+v", m)
	}
	fo.release()
	for _, f := range frames {
		f.release()
	}
}

func TestMessagePackKeepAlivePings(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{KeepAliveInterval: 30 * time.Millisecond, ClientTimeout: time.Minute})
	a := connectMessagePack(t, srv)
	for i := 0; i < 2; i++ {
		if kind, data := a.Read(); kind != websocket.BinaryMessage || string(data) != "\x02\x91\x06" {
			t.Fatalf("idle client got %d %x, want the MessagePack Ping 02 91 06", kind, data)
		}
	}
}
