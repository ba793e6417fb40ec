package transport

import (
	"net"
	"sync"
	"testing"
)

// recordingConn keeps every write it is given, one entry per call.
type recordingConn struct {
	net.Conn
	mu     sync.Mutex
	writes []string
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func (c *recordingConn) calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.writes...)
}

func TestCorkSendsWhatItHeldInOneWrite(t *testing.T) {
	conn := &recordingConn{}
	c := &Cork{Conn: conn}
	write := func(s string) {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("write %q: %d, %v", s, n, err)
		}
	}
	write("open ")
	c.Hold()
	write("measure ")
	write("result ")
	if got := conn.calls(); len(got) != 1 {
		t.Fatalf("while holding, the socket got %q, want only the write before", got)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	write("after")
	want := []string{"open ", "measure result ", "after"}
	got := conn.calls()
	if len(got) != len(want) {
		t.Fatalf("writes %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("write %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestCorkReleasingNothingWritesNothing(t *testing.T) {
	conn := &recordingConn{}
	c := &Cork{Conn: conn}
	c.Hold()
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(); err != nil { // not holding: nothing to do
		t.Fatal(err)
	}
	if got := conn.calls(); len(got) != 0 {
		t.Errorf("an empty hold wrote %q", got)
	}
}
