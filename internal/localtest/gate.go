package localtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Gate is a TCP front on 127.0.0.1 for a server: while open it passes
// every connection through; Shut cuts the connections it passes and, until
// Open, takes every new one and closes it at once, noting when. So a
// client's reconnect attempts can be timed from outside the client.
type Gate struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	shut     bool
	shutAt   time.Time
	attempts []time.Duration // since shutAt, of the connects refused
	conns    map[net.Conn]struct{}
}

// StartGate fronts serverURL's host and returns the gate and serverURL
// through it; it closes when the test ends.
func StartGate(t testing.TB, serverURL string) (*Gate, string) {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &Gate{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	go g.serve()
	t.Cleanup(g.close)
	u.Host = ln.Addr().String()
	return g, u.String()
}

func (g *Gate) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return
		}
		if !g.admit(c) {
			_ = c.Close()
			continue
		}
		go g.pass(c)
	}
}

// admit notes a connect the gate refuses, or takes c in.
func (g *Gate) admit(c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		g.attempts = append(g.attempts, time.Since(g.shutAt))
		return false
	}
	g.conns[c] = struct{}{}
	return true
}

// pass copies c to the target and back until either side ends.
func (g *Gate) pass(c net.Conn) {
	defer g.forget(c)
	up, err := net.Dial("tcp", g.target)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

func (g *Gate) forget(c net.Conn) {
	_ = c.Close()
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.conns, c)
}

// Shut cuts every connection the gate passes and refuses new ones.
func (g *Gate) Shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut, g.shutAt, g.attempts = true, time.Now(), nil
	for c := range g.conns {
		_ = c.Close()
	}
}

// Open passes new connections again.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut = false
}

// Attempts are the connects refused since the last Shut, as the time
// from it.
func (g *Gate) Attempts() []time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]time.Duration(nil), g.attempts...)
}

func (g *Gate) close() {
	_ = g.ln.Close()
	g.Shut()
}
