package webpubsubclient

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// silent never sends connected; it waits for the client to go.
func silent(s *svcConn) { s.closeCode() }

func TestHandshakeTimesOut(t *testing.T) {
	svc := newTestService(t, silent)
	o := svc.options("u", webpubsub.ProtocolJSON)
	o.HandshakeTimeout = 200 * time.Millisecond
	began := time.Now()
	_, err := Dial(context.Background(), o)
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTimeout || !strings.Contains(err.Error(), "no connected message") {
		t.Errorf("err %v, want a timeout ConnectError", err)
	}
	if d := time.Since(began); d < 200*time.Millisecond || d > 2*time.Second {
		t.Errorf("gave up after %s, want about 200ms", d)
	}
	// The caller's deadline bounds the wait as well.
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if _, err := Dial(ctx, svc.options("u", webpubsub.ProtocolJSON)); !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTimeout {
		t.Errorf("ctx deadline: %v", err)
	}
}

func TestServerSilenceEndsTheConnection(t *testing.T) {
	svc := newTestService(t, func(s *svcConn) {
		if s.connected() == nil {
			s.closeCode()
		}
	})
	o := svc.options("u", webpubsub.ProtocolJSON)
	o.ServerTimeout = 300 * time.Millisecond
	o.KeepAliveInterval = time.Hour
	c := svc.dial(t, o)
	localtest.WaitDone(t, c, 3*time.Second)
	if err := c.Err(); !errors.Is(err, clientconn.ErrServerTimeout) {
		t.Errorf("Err %v, want ErrServerTimeout", err)
	}
}

func TestPingsKeepAnIdleConnectionAlive(t *testing.T) {
	hub := newMiniHub()
	hub.received = make(chan string, 256)
	svc := newTestService(t, hub.serve)
	o := svc.options("u", webpubsub.ProtocolJSON)
	o.KeepAliveInterval = 50 * time.Millisecond
	o.ServerTimeout = 300 * time.Millisecond
	obs := &recordingObserver{}
	o.Observer = obs
	c := svc.dial(t, o)
	time.Sleep(time.Second)
	if c.Err() != nil {
		t.Fatalf("idle connection ended: %v", c.Err())
	}
	pings := len(hub.received)
	for range pings {
		if got := <-hub.received; got != "conn-1 ping" {
			t.Errorf("service got %q", got)
		}
	}
	if pings < 5 || pings > 21 {
		t.Errorf("%d pings in 1s at a 50ms interval", pings)
	}
	// Each ping is {"type":"ping"}, each pong {"type":"pong"}: 15 bytes.
	if sent := obs.sent.Load(); sent < int64(15*pings) || sent > int64(15*(pings+1)) {
		t.Errorf("BytesSent %d for %d pings", sent, pings)
	}
}

func TestCancelledContextsLeaveNoGoroutines(t *testing.T) {
	lateAcks := make(chan uint64, 1)
	svc := newTestService(t, func(s *svcConn) {
		if s.connected() != nil {
			return
		}
		serveLateAcks(s, lateAcks)
	})
	hang := newTestService(t, silent)
	baseline := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	began := time.Now()
	_, err := Dial(ctx, hang.options("u", webpubsub.ProtocolJSON))
	if !errors.Is(err, context.Canceled) || time.Since(began) > time.Second {
		t.Errorf("cancelled Dial: %v after %s", err, time.Since(began))
	}
	c, err := Dial(context.Background(), svc.options("u", webpubsub.ProtocolJSONReliable))
	if err != nil {
		t.Fatal(err)
	}
	checkAbandonedAck(t, c, lateAcks)
	if err := c.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	localtest.CheckNoLeak(t, baseline)
}

// serveLateAcks acks the first joinGroup only after the next one arrived,
// so that the first request's caller has given up by then.
func serveLateAcks(s *svcConn, lateAcks chan<- uint64) {
	var first uint64
	for {
		f, err := s.read()
		if err != nil {
			return
		}
		if f.Kind != webpubsub.KindJoinGroup {
			continue
		}
		if first == 0 {
			first = f.AckID
			continue
		}
		_ = s.send(&webpubsub.Frame{Kind: webpubsub.KindAck, AckID: first, Success: true})
		lateAcks <- first
		_ = s.send(&webpubsub.Frame{Kind: webpubsub.KindAck, AckID: f.AckID, Success: true})
	}
}

// checkAbandonedAck: a request whose context ends returns at once; its
// late ack is not an unknown one; a cancelled send writes nothing.
func checkAbandonedAck(t *testing.T, c *Conn, lateAcks <-chan uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.JoinGroup(ctx, "slow"); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no ack for ackId 1") {
		t.Errorf("JoinGroup past its deadline: %v", err)
	}
	if err := c.JoinGroup(context.Background(), "next"); err != nil {
		t.Errorf("JoinGroup after the late ack: %v", err)
	}
	if id := <-lateAcks; id != 1 {
		t.Errorf("late ack for %d", id)
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	if err := c.SendToGroup(done, "g", webpubsub.DataTypeText, []byte("x"), 0); !errors.Is(err, context.Canceled) {
		t.Errorf("send with a cancelled context: %v", err)
	}
	if c.Err() != nil {
		t.Errorf("connection ended: %v", c.Err())
	}
}

func TestSecretsStayOutOfDialErrors(t *testing.T) {
	const token = "tok-SECRET-abc"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := l.Addr().String()
	l.Close()
	for i, o := range []Options{
		{URL: "ws://" + closedAddr + "/client/hubs/h?access_token=" + token},
		{URL: "ws://" + closedAddr + "/client/hubs/h", AccessToken: token},
		{URL: "ws://127.0.0.1:%zz/client/hubs/h?access_token=" + token},
		{URL: "ftp://h/client/hubs/h?access_token=" + token},
		{URL: "ws:///client/hubs/h?access_token=" + token},
	} {
		_, err := Dial(localtest.Ctx(t, 5*time.Second), o)
		if err == nil {
			t.Errorf("Dial %d succeeded", i)
		}
		if err != nil && strings.Contains(err.Error(), token) {
			t.Errorf("error %q carries the token", err)
		}
	}
}
