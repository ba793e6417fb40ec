package pacing

import (
	"context"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/grid"
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
	start := grid.Floor(grid.Now(), p.Slot) + p.Slot
	time.Sleep(start - grid.Now())
	var lags []time.Duration
	next, stop := p.pass(context.Background(), start, 0, p.Total(), func(_ int, lag time.Duration) {
		lags = append(lags, lag)
	})
	// Due at 0 and 100 ms: before the grid's next instant, so sent in the
	// pass at start, the second early and with no lag; the sends due at
	// 200 and 300 ms wait for the pass at the next instant.
	if next != 2 || stop || len(lags) != 2 {
		t.Fatalf("one pass made %d sends (stop %v), want the 2 due before the next grid instant", next, stop)
	}
	if lags[1] != 0 {
		t.Errorf("send 1, made early, reported lag %v, want 0", lags[1])
	}
}

// Two runs started apart, with the same slot, make their passes at the
// same instants of the process's grid, the instants the connections'
// timers land on too: their wake-ups are shared.
func TestPacersStartedApartPassTogether(t *testing.T) {
	const slot = 50 * time.Millisecond
	p := Pacer{Senders: 3, Interval: 300 * time.Millisecond, Duration: 600 * time.Millisecond, Slot: slot}
	// Start off the grid, 60 % of a slot past it: without the grid the
	// passes would land there.
	time.Sleep(grid.Floor(grid.Now(), slot) + slot + 6*slot/10 - grid.Now())
	sends := make(chan time.Duration, 2*int(p.Total()))
	done := make(chan int64, 2)
	for range 2 {
		go func() {
			done <- p.Run(context.Background(), func(int, time.Duration) { sends <- grid.Now() })
		}()
		time.Sleep(17 * time.Millisecond)
	}
	if n := <-done + <-done; n != 2*p.Total() {
		t.Fatalf("%d sends, want %d", n, 2*p.Total())
	}
	close(sends)
	var first time.Duration
	for at := range sends {
		if first == 0 {
			first = at // each run's first pass is at once, off the grid
		}
		// A timer is never early; a busy machine may make it late.
		if at-first > slot && at%slot > slot/2 {
			t.Errorf("a send at %v, %v past the grid of %v", at, at%slot, slot)
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

// A run's slot: 100 ms at a canary's rates, fewer than 32 sends' worth at
// high rates, none without senders.
func TestSendSlotBoundsTheWaitAndTheBurst(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		senders  int
		want     time.Duration
	}{
		{time.Second, 1000, 32 * time.Millisecond},    // 32 sends a pass
		{time.Second, 100, 100 * time.Millisecond},    // 10 sends a pass
		{time.Second, 20, 100 * time.Millisecond},     // 2 sends a pass
		{time.Second, 10, 100 * time.Millisecond},     // one send a pass: nothing to join but other runs' passes
		{time.Second, 10000, 3200 * time.Microsecond}, // 32 sends a pass
		{250 * time.Millisecond, 10000, 800 * time.Microsecond},
		{time.Second, 0, 0},
	} {
		if got := SendSlot(c.interval, c.senders); got != c.want {
			t.Errorf("SendSlot(%v, %d) = %v, want %v", c.interval, c.senders, got, c.want)
		}
	}
}
