package signalrclient

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// pongless plays a hub whose pongs never come back, and which sends a hub
// Ping record every interval (none when interval is 0).
func pongless(interval time.Duration) func(t testing.TB, ws *websocket.Conn) {
	return func(t testing.TB, ws *websocket.Conn) {
		ws.SetPingHandler(func(string) error { return nil })
		read := make(chan struct{})
		go func() { defer close(read); drainUntilClosed(ws) }()
		if interval > 0 {
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				select {
				case <-read:
					return
				case <-tick.C:
					if writeText(ws, "{\"type\":6}\x1e") != nil {
						return
					}
				}
			}
		}
		<-read
	}
}

// A pong stuck behind data still arriving (a link slower than what is sent
// on it) is late, not missing: the connection is alive, not half-open.
func TestCheckAliveCountsArrivingBytesAsAlive(t *testing.T) {
	c := scriptedConn(t, nil, pongless(20*time.Millisecond))
	if err := c.CheckAlive(testCtx(t, 5*time.Second), 200*time.Millisecond); err != nil {
		t.Fatalf("CheckAlive while frames keep arriving: %v", err)
	}
	select {
	case <-c.Done():
		t.Fatalf("connection ended: %v", c.Err())
	default:
	}
}

// No pong and no byte at all within the wait: half-open, and the
// connection ends.
func TestCheckAliveEndsASilentConnection(t *testing.T) {
	c := scriptedConn(t, nil, pongless(0))
	start := time.Now()
	err := c.CheckAlive(testCtx(t, 5*time.Second), 200*time.Millisecond)
	if !errors.Is(err, clientconn.ErrServerTimeout) || !strings.Contains(err.Error(), "no answer to a WebSocket ping within 200ms; the connection is half-open") {
		t.Fatalf("CheckAlive on a silent peer: %v", err)
	}
	if elapsed := time.Since(start); elapsed < 200*time.Millisecond {
		t.Errorf("gave up after %v, before the 200ms wait", elapsed)
	}
	localtest.WaitDone(t, c, 3*time.Second)
}
