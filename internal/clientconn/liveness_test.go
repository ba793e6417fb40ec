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
	c.live.Start()
	return c
}

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
