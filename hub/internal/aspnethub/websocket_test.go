package aspnethub

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/core"
)

// writeCounter counts the writes made on every connection a listener
// accepts.
type writeCounter struct{ writes atomic.Int64 }

func (w *writeCounter) wrap(l net.Listener) net.Listener { return countingListener{l, w} }

type countingListener struct {
	net.Listener
	w *writeCounter
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.w}, nil
}

type countingConn struct {
	net.Conn
	w *writeCounter
}

func (c countingConn) Write(p []byte) (int, error) {
	c.w.writes.Add(1)
	return c.Conn.Write(p)
}

// Echo's Measure and the invocation's result leave in one write, so the
// client takes both with one read; written apart, by the pump and by the
// reader, each echo took two.
func TestWebSocketEchoAnswersInOneWrite(t *testing.T) {
	const echoes = 5
	counter := &writeCounter{}
	r := startRigListening(t, Config{}, core.Config{}, counter.wrap)
	ws := r.dialWebSocket(r.negotiate().ConnectionToken)
	before := counter.writes.Load()
	for range echoes {
		echoOverWebSocket(t, ws)
	}
	if got := counter.writes.Load() - before; got != echoes {
		t.Errorf("%d echoes took %d writes, want %d", echoes, got, echoes)
	}
}

// keepAlivesWithin counts the keep-alives ws receives in d; with
// echoEvery set, it invokes Echo that often meanwhile.
func keepAlivesWithin(t *testing.T, ws *websocket.Conn, d, echoEvery time.Duration) int {
	t.Helper()
	var keepAlives atomic.Int64
	done := make(chan struct{})
	_ = ws.SetReadDeadline(time.Now().Add(d))
	go func() {
		defer close(done)
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return // the window is over
			}
			if string(data) == aspnet.KeepAlive {
				keepAlives.Add(1)
			}
		}
	}()
	if echoEvery > 0 {
		for end := time.Now().Add(d - echoEvery); time.Now().Before(end); time.Sleep(echoEvery) {
			if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"H":"signalrbench","M":"Echo","A":[1,"cA=="],"I":0}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	<-done
	return int(keepAlives.Load())
}

// The classic hub sends a keep-alive to a connection that was sent nothing
// for the keep-alive interval, as the client's keep-alive timeout expects,
// and none to one that gets messages; not one at every heartbeat.
func TestKeepAlivesGoOnlyToSilentConnections(t *testing.T) {
	const interval = 400 * time.Millisecond // the heartbeat beats every 100 ms
	r := startRig(t, Config{}, core.Config{KeepAliveInterval: interval})
	silent := r.dialWebSocket(r.negotiate().ConnectionToken)
	if got := keepAlivesWithin(t, silent, 3*interval, 0); got < 1 || got > 3 {
		t.Errorf("a silent connection got %d keep-alives in three keep-alive intervals, want 2 (1 to 3)", got)
	}
	busy := r.dialWebSocket(r.negotiate().ConnectionToken)
	if got := keepAlivesWithin(t, busy, 3*interval, interval/4); got != 0 {
		t.Errorf("a connection sent a message every %v got %d keep-alives, want none", interval/4, got)
	}
}
