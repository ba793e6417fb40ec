package aspnethub

import (
	"net"
	"sync/atomic"
	"testing"

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
