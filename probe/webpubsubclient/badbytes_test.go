package webpubsubclient

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/webpubsub"
)

type badBytes struct {
	proto    string
	frame    string // a text frame, unless binary
	binary   bool
	wantCode int    // the close code the client answers with
	wantText string // in the connection's error
}

var badBytesCases = map[string]badBytes{
	"garbage":                     {frame: "not json at all", wantText: "invalid frame"},
	"truncated JSON":              {frame: `{"type":"ack","ackId":1`, wantText: "invalid frame"},
	"not an object":               {frame: `[1,2]`, wantText: "not a JSON object"},
	"ack for an unknown id":       {frame: `{"type":"ack","ackId":99,"success":true}`, wantText: "ackId 99"},
	"ack for id zero":             {frame: `{"type":"ack","ackId":0,"success":false}`, wantText: "ackId 0"},
	"ack without success":         {frame: `{"type":"ack","ackId":1}`, wantText: "invalid frame"},
	"connected without id":        {frame: `{"type":"system","event":"connected","userId":"u"}`, wantText: "connectionId"},
	"disconnected, message a num": {frame: `{"type":"system","event":"disconnected","message":5}`, wantText: "invalid frame"},
	"client-only frame":           {frame: `{"type":"joinGroup","group":"g"}`, wantText: "only clients send"},
	"message without data":        {frame: `{"type":"message","from":"group","group":"g","dataType":"text"}`, wantText: "invalid frame"},
	"reliable, no sequenceId":     {proto: webpubsub.ProtocolJSONReliable, frame: `{"type":"message","from":"server","dataType":"text","data":"x"}`, wantText: "without a sequenceId"},
	"bad base64":                  {frame: `{"type":"message","from":"server","dataType":"binary","data":"!!"}`, wantText: "invalid frame"},
	"binary frame":                {frame: `{"type":"pong"}`, binary: true, wantText: "binary frame"},
	"over the size limit":         {frame: `{"type":"message","from":"server","dataType":"text","data":"` + strings.Repeat("x", 16<<10) + `"}`, wantCode: websocket.CloseMessageTooBig, wantText: "1024-byte limit"},
}

func TestBadBytesEndTheConnectionWithAReason(t *testing.T) {
	for name, k := range badBytesCases {
		t.Run(name, func(t *testing.T) {
			codes := make(chan int, 1)
			svc := newTestService(t, func(s *svcConn) {
				if s.connected() != nil {
					return
				}
				typ := websocket.TextMessage
				if k.binary {
					typ = websocket.BinaryMessage
				}
				_ = s.ws.WriteMessage(typ, []byte(k.frame))
				codes <- s.closeCode()
			})
			o := svc.options("u", k.proto)
			o.MaxMessageSize = 1024
			c := svc.dial(t, o)
			localtest.WaitDone(t, c, 3*time.Second)
			err := c.Err()
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), k.wantText) {
				t.Errorf("Err() = %v, want ErrProtocol saying %q", err, k.wantText)
			}
			want := k.wantCode
			if want == 0 {
				want = websocket.CloseProtocolError
			}
			if code := <-codes; code != want {
				t.Errorf("client closed with %d, want %d", code, want)
			}
			if err := c.JoinGroup(context.Background(), "g"); !errors.Is(err, clientconn.ErrClosed) || !errors.Is(err, ErrProtocol) {
				t.Errorf("call after the failure: %v", err)
			}
			noSecret(t, err, o.AccessToken)
		})
	}
}

func TestUnknownFramesAreSkipped(t *testing.T) {
	svc := newTestService(t, func(s *svcConn) {
		if s.connected() != nil {
			return
		}
		for _, f := range []string{
			`{"type":"future","x":1}`,
			`{"type":"system","event":"reconnecting"}`,
			`{"type":"message","from":"elsewhere","data":1}`,
			`{"type":"message","from":"server","dataType":"protobuf","data":"x"}`,
			`{"type":"pong"}`,
			`{"type":"message","from":"server","dataType":"text","data":"still here"}`,
		} {
			_ = s.sendText(f)
		}
		s.closeCode()
	})
	in := newInbox()
	o := svc.options("u", webpubsub.ProtocolJSON)
	o.OnServerMessage = in.handler
	c := svc.dial(t, o)
	if m := in.next(t); string(m.Data) != "still here" {
		t.Errorf("got %q", m.Data)
	}
	in.quiet(t, 50*time.Millisecond)
	if c.Err() != nil {
		t.Errorf("connection ended: %v", c.Err())
	}
}

func TestBadBytesBeforeConnectedFailTheHandshake(t *testing.T) {
	for name, frame := range map[string]string{
		"garbage":         "{{{",
		"a message first": `{"type":"message","from":"server","dataType":"text","data":"x"}`,
		"an ack first":    `{"type":"ack","ackId":1,"success":true}`,
	} {
		svc := newTestService(t, func(s *svcConn) {
			_ = s.sendText(frame)
			s.closeCode()
		})
		_, err := Dial(localtest.Ctx(t, 5*time.Second), svc.options("u", webpubsub.ProtocolJSON))
		var ce *clientconn.ConnectError
		if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseHandshake || !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v, want a handshake ConnectError wrapping ErrProtocol", name, err)
		}
	}
	// Unknown frames before connected are skipped there too.
	svc := newTestService(t, func(s *svcConn) {
		_ = s.sendText(`{"type":"future"}`)
		if s.connected() == nil {
			s.closeCode()
		}
	})
	svc.dial(t, svc.options("u", webpubsub.ProtocolJSON))
}

func TestSubprotocolNotAcceptedFailsTheHandshake(t *testing.T) {
	svc := newTestService(t, func(s *svcConn) { s.closeCode() }, func(s *testService) { s.upgrader.Subprotocols = nil })
	_, err := Dial(localtest.Ctx(t, 5*time.Second), svc.options("u", webpubsub.ProtocolJSONReliable))
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseHandshake || !strings.Contains(err.Error(), "did not accept subprotocol") {
		t.Errorf("err %v", err)
	}
}
