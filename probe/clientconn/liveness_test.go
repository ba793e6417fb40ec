package clientconn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// liveConn is the least a liveness check needs: a state, a Liveness and
// what ended the connection.
type liveConn struct {
	state State
	live  Liveness
	ended error
}

func newLiveConn() *liveConn {
	c := &liveConn{}
	c.state.Init()
	c.live.Start(nil)
	return c
}

// roundTripFunc is a RoundTripObserver made of a function.
type roundTripFunc func(time.Duration)

func (f roundTripFunc) RoundTrip(d time.Duration) { f(d) }

func (c *liveConn) end(err error) { c.ended = err; c.state.End(err) }

func (c *liveConn) check(ping func([]byte, time.Time) error) error {
	return c.live.Check(context.Background(), 100*time.Millisecond, &c.state, ping, c.end)
}

func TestLivenessCheck(t *testing.T) {
	pong := func(c *liveConn, payload string) { go func() { _ = c.live.OnPong(payload) }() }
	for _, tc := range []struct {
		name     string
		ping     func(c *liveConn) func([]byte, time.Time) error
		halfOpen string // the reason the connection ends with; "" alive
	}{
		{"answered", func(c *liveConn) func([]byte, time.Time) error {
			return func(p []byte, _ time.Time) error { pong(c, string(p)); return nil }
		}, ""},
		{"a pong for another ping is no answer", func(c *liveConn) func([]byte, time.Time) error {
			return func(p []byte, _ time.Time) error { pong(c, string(p)+"0"); return nil }
		}, "no answer to a WebSocket ping within 100ms; the connection is half-open"},
		{"bytes still arriving: late, not missing", func(c *liveConn) func([]byte, time.Time) error {
			return func([]byte, time.Time) error {
				go func() { time.Sleep(20 * time.Millisecond); c.live.MarkRead() }()
				return nil
			}
		}, ""},
		{"ping not written in time", func(*liveConn) func([]byte, time.Time) error {
			return func([]byte, time.Time) error { return context.DeadlineExceeded }
		}, "a WebSocket ping could not be written within 100ms; the connection is half-open"},
	} {
		c := newLiveConn()
		err := c.check(tc.ping(c))
		switch {
		case tc.halfOpen == "" && (err != nil || c.ended != nil):
			t.Errorf("%s: %v, ended %v; want alive", tc.name, err, c.ended)
		case tc.halfOpen != "" && (!errors.Is(err, ErrServerTimeout) || !strings.HasSuffix(err.Error(), tc.halfOpen) || c.ended != err):
			t.Errorf("%s: %v, ended %v; want the connection ended with %q", tc.name, err, c.ended, tc.halfOpen)
		}
	}
	c := newLiveConn()
	if err := c.check(func([]byte, time.Time) error { return errors.New("broken pipe") }); !strings.Contains(err.Error(), "probe: ping failed: broken pipe") || c.ended != err {
		t.Errorf("failed ping: %v, ended %v", err, c.ended)
	}
	if err := c.check(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("check of an ended connection: %v, want ErrClosed", err)
	}
}

// A ping's round trip is timed from its write to the pong with its own
// payload; a pong with another payload is no answer, and while a check
// waits for its pong, PingRoundTrip leaves the check alone.
func TestLivenessTimesRoundTrips(t *testing.T) {
	var l Liveness
	rtts := make(chan time.Duration, 4)
	l.Start(roundTripFunc(func(d time.Duration) { rtts <- d }))
	// The peer answers another ping first, then this one.
	l.PingRoundTrip(func(p []byte, _ time.Time) error {
		go func() {
			time.Sleep(10 * time.Millisecond)
			_ = l.OnPong(string(p) + "0")
			time.Sleep(30 * time.Millisecond)
			_ = l.OnPong(string(p))
			_ = l.OnPong(string(p)) // a repeated pong is no second round trip
		}()
		return nil
	}, time.Second)
	select {
	case d := <-rtts:
		if d < 40*time.Millisecond || d > time.Second {
			t.Errorf("round trip %v, want 40 ms and a little", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no round trip reported")
	}
	time.Sleep(50 * time.Millisecond)
	if len(rtts) != 0 {
		t.Errorf("%d more round trips reported, want the one", len(rtts))
	}
	c := newLiveConn()
	c.live.obs = roundTripFunc(func(d time.Duration) { rtts <- d })
	var pings int
	err := c.check(func(p []byte, _ time.Time) error {
		pings++
		c.live.PingRoundTrip(func([]byte, time.Time) error { pings++; return nil }, time.Second)
		go func() { _ = c.live.OnPong(string(p)) }()
		return nil
	})
	if err != nil || pings != 1 || len(rtts) != 1 {
		t.Errorf("check: %v, %d pings written, %d round trips; want alive, the check's own ping alone, timed", err, pings, len(rtts))
	}
}
