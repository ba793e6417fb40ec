package pacing

import (
	"context"
	"testing"
	"time"
)

func TestPacerSpreadsSendsEvenlyAcrossSenders(t *testing.T) {
	p := Pacer{Senders: 4, Interval: time.Second, Duration: 2 * time.Second}
	if got := p.Total(); got != 8 {
		t.Fatalf("total = %d, want 8", got)
	}
	for n, want := range []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond, time.Second} {
		if got := p.Due(int64(n)); got != want {
			t.Errorf("due(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestPacerIsOpenLoopAndReportsLag(t *testing.T) {
	p := Pacer{Senders: 2, Interval: 20 * time.Millisecond, Duration: 200 * time.Millisecond}
	var calls []int
	var lags []time.Duration
	n := p.Run(context.Background(), func(sender int, lag time.Duration) {
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
	p := Pacer{Senders: 1, Interval: 10 * time.Millisecond, Duration: time.Hour}
	n := p.Run(ctx, func(int, time.Duration) {
		cancel()
	})
	if n != 1 {
		t.Fatalf("sent %d after cancel, want 1", n)
	}
}

func TestPacerSendsWhatFallsDueWithinTheSlotInOnePass(t *testing.T) {
	p := Pacer{Senders: 4, Interval: 400 * time.Millisecond, Duration: 400 * time.Millisecond, Slot: 200 * time.Millisecond}
	var lags []time.Duration
	next, stop := p.pass(context.Background(), time.Now(), 0, p.Total(), func(_ int, lag time.Duration) {
		lags = append(lags, lag)
	})
	// Due at 0, 100 and 200 ms: inside the slot from now, so sent at once,
	// early and with no lag; the send due at 300 ms waits for its own pass.
	if next != 3 || stop || len(lags) != 3 {
		t.Fatalf("one pass made %d sends (stop %v), want the 3 due within the slot", next, stop)
	}
	for i, lag := range lags[1:] {
		if lag != 0 {
			t.Errorf("send %d, made early, reported lag %v, want 0", i+1, lag)
		}
	}
}

func TestPacerBatchedByTheSlotKeepsItsScheduleAfterALatePass(t *testing.T) {
	p := Pacer{Senders: 4, Interval: 80 * time.Millisecond, Duration: 400 * time.Millisecond, Slot: 30 * time.Millisecond}
	start := time.Now()
	var at []time.Duration
	var lags []time.Duration
	n := p.Run(context.Background(), func(_ int, lag time.Duration) {
		at, lags = append(at, time.Since(start)), append(lags, lag)
		if len(at) == 1 {
			time.Sleep(100 * time.Millisecond) // a pass that overruns five sends' due times
		}
	})
	if n != 20 || len(at) != 20 {
		t.Fatalf("sent %d (%d calls), want 20", n, len(at))
	}
	if lags[4] < 15*time.Millisecond {
		t.Errorf("send 4, due at 80 ms behind a 100 ms stall, reported lag %v, want at least 15ms", lags[4])
	}
	// Open loop: the stall shifts nothing after it. No send leaves before
	// its due time less the slot, and the last leaves near its own time.
	for i, got := range at {
		if due := p.Due(int64(i)); got < due-p.Slot {
			t.Errorf("send %d left at %v, more than the slot before its due time %v", i, got, due)
		}
	}
	if last := at[19]; last > p.Due(19)+60*time.Millisecond {
		t.Errorf("last send left at %v, due at %v: the stall pushed the schedule back", last, p.Due(19))
	}
}

// A run's slot: 20 ms at a canary's rates, fewer than 32 sends' worth at
// high rates, none without senders.
func TestSendSlotBoundsTheWaitAndTheBurst(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		senders  int
		want     time.Duration
	}{
		{time.Second, 1000, 20 * time.Millisecond},    // 20 sends a pass
		{time.Second, 10, 20 * time.Millisecond},      // one send in 100 ms: nothing to join
		{time.Second, 10000, 3200 * time.Microsecond}, // 32 sends a pass
		{250 * time.Millisecond, 10000, 800 * time.Microsecond},
		{time.Second, 0, 0},
	} {
		if got := SendSlot(c.interval, c.senders); got != c.want {
			t.Errorf("SendSlot(%v, %d) = %v, want %v", c.interval, c.senders, got, c.want)
		}
	}
}
