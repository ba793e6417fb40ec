package signalrhub

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
)

// maskedFrame is a client's WebSocket frame of up to 125 bytes: FIN, the
// opcode, the mask bit with an all-zero key (the payload goes as it is).
func maskedFrame(opcode byte, payload string) []byte {
	return append([]byte{0x80 | opcode, 0x80 | byte(len(payload)), 0, 0, 0, 0}, payload...)
}

// A client's WebSocket ping that arrives in the same read as an
// invocation (a probe measuring its round trip) must not hold the
// invocation's completion back: the hub keeps replies while more input is
// buffered, and reads a ping without returning a message, so it must
// flush before it answers the ping, or the completion waits for the
// client's next message.
func TestPingBehindAnInvocationDoesNotHoldItsCompletion(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	invocation := `{"type":1,"invocationId":"7","target":"JoinGroup","arguments":["g"]}` + "\x1e"
	frames := append(maskedFrame(0x1, invocation), maskedFrame(0x9, "rtt-1")...)
	if _, err := c.WS.NetConn().Write(frames); err != nil { // one write: one read on the hub
		t.Fatal(err)
	}
	pong := make(chan string, 1)
	c.WS.SetPongHandler(func(data string) error { pong <- data; return nil })
	for range 2 { // the JoinGroup callback, then the completion
		rec, err := c.TryNextRecord(2 * time.Second)
		if err != nil {
			t.Fatalf("no reply to JoinGroup within 2 s of a ping behind it: %v", err)
		}
		if string(rec) == `{"type":3,"invocationId":"7"}` {
			_, _ = c.TryNextRecord(500 * time.Millisecond) // reads the pong behind it
			select {
			case p := <-pong:
				if p != "rtt-1" {
					t.Errorf("pong %q, want the ping's payload", p)
				}
			default:
				t.Error("the ping got no pong")
			}
			return
		}
	}
	t.Fatal("no completion of JoinGroup")
}
