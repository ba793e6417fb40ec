package floor

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

func TestClientTimesEveryEchoFromTheServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	srvCtx, stopServer := context.WithCancel(ctx)
	go func() { served <- Serve(srvCtx, ln) }()
	rep, err := RunClient(ctx, ClientConfig{
		URL: "ws://" + ln.Addr().String() + "/", Connections: 5, Window: time.Second, Interval: 250 * time.Millisecond,
		Size: 2048, ConnectConcurrency: 2, ConnectTimeout: 5 * time.Second, LossTimeout: 5 * time.Second,
	})
	stopServer()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	// 5 connections × 4 sends each (one per 250 ms for 1 s).
	if rep.Connections != 5 || rep.Sent != 20 || rep.Received != 20 || rep.Lost != 0 {
		t.Errorf("report %+v, want 5 connections, 20 sent and received, none lost", rep)
	}
	l := rep.Latency
	if !(l.P50 > 0 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max && l.Max < 5) {
		t.Errorf("latency quantiles %+v are not positive, ordered and under the loss timeout", l)
	}
}

func TestClientRefusesABadConfigAndUnreachableServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ok := ClientConfig{Connections: 1, Window: time.Second, Interval: time.Second, Size: 64, ConnectConcurrency: 1,
		ConnectTimeout: time.Second, LossTimeout: time.Second}
	small := ok
	small.Size = 8
	if _, err := RunClient(ctx, small); err == nil || !strings.Contains(err.Error(), "size must be at least 20") {
		t.Errorf("size 8: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ok
	closed.URL = "ws://" + ln.Addr().String() + "/"
	_ = ln.Close() // nothing listens there any more
	if _, err := RunClient(ctx, closed); err == nil || !strings.Contains(err.Error(), "1 of 1 connections failed") {
		t.Errorf("unreachable server: %v", err)
	}
}
