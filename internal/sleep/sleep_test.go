package sleep_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/sleep"
)

// A wait that runs its course lasts at least its duration and reports no
// error.
func TestForWaitsTheDuration(t *testing.T) {
	began := time.Now()
	if err := sleep.For(context.Background(), 30*time.Millisecond); err != nil {
		t.Fatalf("For: %v", err)
	}
	if waited := time.Since(began); waited < 30*time.Millisecond {
		t.Errorf("For(30ms) returned after %s", waited)
	}
}

// A context that ends cuts the wait short with its error; one that has
// already ended does so even for a wait that is already due.
func TestForEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := within(t, func() error { return sleep.For(ctx, time.Minute) }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("For(1m) with a 20 ms context: %v, want the deadline", err)
	}
	ended, stop := context.WithCancel(context.Background())
	stop()
	for _, d := range []time.Duration{0, -time.Second, time.Hour} {
		if err := within(t, func() error { return sleep.For(ended, d) }); !errors.Is(err, context.Canceled) {
			t.Errorf("For(%s) with an ended context: %v, want canceled", d, err)
		}
	}
}

// within is wait's error, or a failure of t when wait has not returned
// within 5 s.
func within(t *testing.T, wait func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not end with its context")
		return nil
	}
}

// Until an instant already past returns at once; until one ahead waits
// for it.
func TestUntil(t *testing.T) {
	began := time.Now()
	if err := sleep.Until(context.Background(), began.Add(-time.Hour)); err != nil || time.Since(began) > time.Second {
		t.Errorf("Until an hour ago: %v after %s", err, time.Since(began))
	}
	due := time.Now().Add(30 * time.Millisecond)
	if err := sleep.Until(context.Background(), due); err != nil || time.Now().Before(due) {
		t.Errorf("Until 30 ms ahead: %v, returned %s early", err, time.Until(due))
	}
}
