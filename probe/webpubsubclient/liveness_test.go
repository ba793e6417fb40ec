package webpubsubclient

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// A service that reads answers the WebSocket ping and the connection stays
// open; one that stopped reading is half-open: the check ends the
// connection within its wait, long before the server timeout would.
func TestCheckAliveTellsAHalfOpenServiceFromALiveOne(t *testing.T) {
	hub := newMiniHub()
	live := newTestService(t, hub.serve)
	o := live.options("u", webpubsub.ProtocolJSON)
	o.KeepAliveInterval, o.ServerTimeout = time.Hour, time.Hour
	c := live.dial(t, o)
	if err := c.CheckAlive(context.Background(), time.Second); err != nil || c.Err() != nil {
		t.Fatalf("live service: CheckAlive %v, Err %v", err, c.Err())
	}

	release := make(chan struct{})
	deaf := newTestService(t, func(s *svcConn) {
		if s.connected() == nil {
			<-release // never reads again, so never answers a ping
		}
	})
	t.Cleanup(func() { close(release) })
	c = deaf.dial(t, deaf.options("u", webpubsub.ProtocolJSON))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.CheckAlive(ctx, time.Second); !errors.Is(err, context.Canceled) || c.Err() != nil {
		t.Fatalf("cancelled check: %v, Err %v; want context.Canceled and the connection left open", err, c.Err())
	}
	began := time.Now()
	err := c.CheckAlive(context.Background(), 300*time.Millisecond)
	if took := time.Since(began); !errors.Is(err, clientconn.ErrServerTimeout) || !strings.Contains(err.Error(), "half-open") || took < 300*time.Millisecond || took > 2*time.Second {
		t.Fatalf("deaf service: CheckAlive %v after %v; want a half-open ErrServerTimeout after about 300ms", err, took)
	}
	localtest.WaitDone(t, c, 3*time.Second)
	if !errors.Is(c.Err(), clientconn.ErrServerTimeout) {
		t.Errorf("Err %v, want the half-open reason", c.Err())
	}
}
