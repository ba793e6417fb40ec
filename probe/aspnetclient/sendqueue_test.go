package aspnetclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/aspnetclient"
)

// On the HTTP transports a send starts its POST and returns: while the
// hub holds every send unanswered, MaxSendsInFlight sends return at once,
// the next waits for a free slot (here until its context ends, leaving
// the connection open), and once the hub answers, every held send is
// delivered.
func TestSendsDoNotWaitForEarlierPOSTs(t *testing.T) {
	for _, transport := range transports[1:] {
		t.Run(transport, func(t *testing.T) {
			h := newMiniHub(t, func(h *miniHub) { h.holdSends = make(chan struct{}) })
			var release sync.Once
			defer release.Do(func() { close(h.holdSends) })
			measured := make(chan struct{}, 2*aspnetclient.MaxSendsInFlight)
			c, err := dial(t, h, transport, func(o *aspnetclient.Options) {
				o.Handlers = map[string]aspnetclient.Handler{"Measure": func([]json.RawMessage) { measured <- struct{}{} }}
			})
			if err != nil {
				t.Fatal(err)
			}
			sendHeld(t, h, c)
			release.Do(func() { close(h.holdSends) })
			for i := range aspnetclient.MaxSendsInFlight {
				select {
				case <-measured:
				case <-time.After(5 * time.Second):
					t.Fatalf("%d of %d held sends delivered", i, aspnetclient.MaxSendsInFlight)
				}
			}
			if got := h.maxSendsOpen.Load(); got != aspnetclient.MaxSendsInFlight {
				t.Errorf("the hub saw %d sends open at once, want %d", got, aspnetclient.MaxSendsInFlight)
			}
		})
	}
}

// sendHeld makes MaxSendsInFlight sends the hub holds, each of which must
// return at once, then one more, which must wait for a slot.
func sendHeld(t *testing.T, h *miniHub, c *aspnetclient.Conn) {
	t.Helper()
	payload := json.RawMessage(`"p"`)
	for i := range aspnetclient.MaxSendsInFlight {
		sent := make(chan error, 1)
		go func() { sent <- c.Send(context.Background(), "Echo", json.RawMessage(`1`), payload) }()
		select {
		case err := <-sent:
			if err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		case <-time.After(time.Second):
			t.Fatalf("send %d did not return within 1 s while the hub held the POSTs open", i)
		}
	}
	waitFor(t, func() bool { return h.sendsOpen.Load() == aspnetclient.MaxSendsInFlight })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := c.Send(ctx, "Echo", json.RawMessage(`1`), payload); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send beyond the slots: error %v, want it to wait for a slot until its context ended", err)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("a send that found no slot ended the connection: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Long polling waits the L of each answer before its next poll, as the
// JavaScript client does, even when the hub answers every poll at once.
func TestLongPollingWaitsTheDelayBetweenPolls(t *testing.T) {
	const delay = 150 * time.Millisecond
	h := newMiniHub(t, func(h *miniHub) { h.longPollDelay = int(delay / time.Millisecond) })
	c, err := dial(t, h, "longPolling", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	_ = c.Close(context.Background())
	h.mu.Lock()
	polls := append([]time.Time(nil), h.polls...)
	h.mu.Unlock()
	if len(polls) < 3 || len(polls) > 8 {
		t.Fatalf("%d polls in 1 s with L = %s, want 3 to 8", len(polls), delay)
	}
	for i := 1; i < len(polls); i++ {
		if gap := polls[i].Sub(polls[i-1]); gap < delay {
			t.Errorf("poll %d came %s after the one before, under L = %s", i, gap, delay)
		}
	}
}
