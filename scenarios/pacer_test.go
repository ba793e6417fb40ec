package scenarios

import (
	"context"
	"testing"
	"time"
)

func TestPacerSpreadsSendsEvenlyAcrossSenders(t *testing.T) {
	p := pacer{senders: 4, interval: time.Second, duration: 2 * time.Second}
	if got := p.total(); got != 8 {
		t.Fatalf("total = %d, want 8", got)
	}
	for n, want := range []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond, time.Second} {
		if got := p.due(int64(n)); got != want {
			t.Errorf("due(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestPacerIsOpenLoopAndReportsLag(t *testing.T) {
	p := pacer{senders: 2, interval: 20 * time.Millisecond, duration: 200 * time.Millisecond}
	var calls []int
	var lags []time.Duration
	n := p.run(context.Background(), func(sender int, lag time.Duration) {
		calls = append(calls, sender)
		lags = append(lags, lag)
		if len(calls) == 1 {
			// A slow first send must not push the schedule back: the sends
			// that fell due meanwhile go out at once, reported as late.
			time.Sleep(60 * time.Millisecond)
		}
	})
	if n != 20 || len(calls) != 20 {
		t.Fatalf("sent %d (%d calls), want 20", n, len(calls))
	}
	for i, s := range calls {
		if s != i%2 {
			t.Fatalf("send %d from sender %d, want %d", i, s, i%2)
		}
	}
	if lags[1] < 40*time.Millisecond {
		t.Fatalf("second send lag %v, want >= 40ms after a 60ms stall", lags[1])
	}
}

func TestPacerStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := pacer{senders: 1, interval: 10 * time.Millisecond, duration: time.Hour}
	n := p.run(ctx, func(int, time.Duration) {
		cancel()
	})
	if n != 1 {
		t.Fatalf("sent %d after cancel, want 1", n)
	}
}
