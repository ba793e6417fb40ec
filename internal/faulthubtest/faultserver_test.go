package faulthubtest

import (
	"context"
	"encoding/json"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/signalrclient"
)

// TestHealthyServerEchoes checks the baseline every fault departs from: a
// real client negotiates, connects, gets OnConnected and its echo back.
func TestHealthyServerEchoes(t *testing.T) {
	before := runtime.NumGoroutine()
	srv, err := Start(Script{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got := make(chan string, 2)
	record := func(target string) signalrclient.Handler {
		return func(args []json.RawMessage) { got <- target + " " + string(args[0]) }
	}
	c, err := signalrclient.Dial(ctx, signalrclient.Options{URL: srv.URL(), Handlers: map[string]signalrclient.Handler{
		"OnConnected": record("OnConnected"), "RecordLatency": record("RecordLatency"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, "Echo", json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`OnConnected "t1"`, `RecordLatency {"n":1}`} {
		select {
		case g := <-got:
			if g != want {
				t.Fatalf("got %s, want %s", g, want)
			}
		case <-ctx.Done():
			t.Fatalf("no %s", want)
		}
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.Counts(); n != (Counts{Negotiations: 1, Upgrades: 1, Handshakes: 1, Echoes: 1, Closes: 1}) {
		t.Fatalf("counts = %+v", n)
	}
	srv.Close()
	waitGoroutines(t, before)
}

// TestCloseReleasesHeldConnections checks that Close ends even while the
// server holds sockets it never answers.
func TestCloseReleasesHeldConnections(t *testing.T) {
	before := runtime.NumGoroutine()
	srv, err := Start(Script{Fault: Silent})
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.URL()[len("http://") : len(srv.URL())-len(hubPath)]
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for srv.Counts().Negotiations == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung on a held connection")
	}
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatalf("read %d bytes from a silent server", n)
	}
	conn.Close()
	waitGoroutines(t, before)
}

func TestClosedPortURLRefuses(t *testing.T) {
	u, err := ClosedPortURL()
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", u[len("http://"):len(u)-len(hubPath)], time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("%s accepted a connection", u)
	}
}

func waitGoroutines(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines, baseline %d:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
}
