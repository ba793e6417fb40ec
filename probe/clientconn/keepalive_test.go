package clientconn

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/grid"
)

// hooks is a KeepAliveConn made of functions; measure may be nil when
// the keep-alive does not measure.
type hooks struct{ ping, measure func() }

func (h hooks) KeepAlivePing()    { h.ping() }
func (h hooks) MeasureRoundTrip() { h.measure() }

// The tick is driven by hand (the timer is an hour away), so the check
// does not depend on timing: no ping right after the start or a write, a
// ping once the connection was silent for a whole interval, none after
// Stop, and a stopped keep-alive does not re-arm.
func TestKeepAlivePingsOnlyAfterAWholeIdleInterval(t *testing.T) {
	var k KeepAlive
	var pings atomic.Int32
	k.Start(time.Hour, hooks{ping: func() { pings.Add(1) }})
	k.tick()
	k.MarkWritten()
	k.tick()
	if n := pings.Load(); n != 0 {
		t.Fatalf("%d pings within the interval, want 0", n)
	}
	k.lastWrite.Store(int64(grid.Now() - 2*time.Hour))
	k.tick()
	if n := pings.Load(); n != 1 {
		t.Fatalf("%d pings after two idle intervals, want 1", n)
	}
	k.tick() // the ping did not write (it counts only): idle still
	if n := pings.Load(); n != 2 {
		t.Fatalf("%d pings, want 2", n)
	}
	k.Stop()
	if k.timer.Stop() {
		t.Error("Stop left the timer armed")
	}
	k.tick()
	if k.timer.Stop() {
		t.Error("a tick after Stop re-armed the timer")
	}
}

// A real timer: a connection that writes nothing is pinged once per
// interval; Stop ends it.
func TestKeepAliveTimerPingsEveryInterval(t *testing.T) {
	var k KeepAlive
	pinged := make(chan struct{}, 8)
	k.Start(20*time.Millisecond, hooks{ping: func() { pinged <- struct{}{} }})
	for n := 0; n < 3; n++ {
		select {
		case <-pinged:
		case <-time.After(3 * time.Second):
			t.Fatalf("only %d pings in 3 s at a 20 ms interval", n)
		}
	}
	k.Stop()
	time.Sleep(60 * time.Millisecond)
	for len(pinged) > 0 {
		<-pinged
	}
	select {
	case <-pinged:
		t.Error("pinged after Stop")
	case <-time.After(100 * time.Millisecond):
	}
}

// The round trip is measured in Start, before the caller can write the
// connection's first message, and then every interval, however busy the
// connection is with writes, on the keep-alive's own timer.
func TestKeepAliveMeasuresRoundTripsOnItsTimer(t *testing.T) {
	var k KeepAlive
	var pings atomic.Int32
	measured := make(chan time.Time, 8)
	k.MeasureEvery(300 * time.Millisecond)
	began := time.Now()
	k.Start(time.Hour, hooks{ping: func() { pings.Add(1) }, measure: func() { measured <- time.Now() }})
	defer k.Stop()
	if n := len(measured); n != 1 {
		t.Fatalf("%d round trips measured when Start returned, want 1", n)
	}
	var at []time.Duration
	for len(at) < 3 {
		k.MarkWritten()
		select {
		case m := <-measured:
			at = append(at, m.Sub(began))
		case <-time.After(3 * time.Second):
			t.Fatalf("measured at %v only, in 3 s", at)
		}
	}
	if at[0] > 150*time.Millisecond || at[1] < 300*time.Millisecond || at[2]-at[1] < 300*time.Millisecond {
		t.Errorf("measured at %v; want at once, then every 300 ms", at)
	}
	if n := pings.Load(); n != 0 {
		t.Errorf("%d keep-alive pings on a busy connection, want 0", n)
	}
}

// Every keep-alive's wait ends on the one grid the process shares, never
// before the wait asked for and never more than a grain after it, so the
// runtime fires many connections' ticks in one pass.
func TestKeepAliveWaitsEndOnTheSharedGrid(t *testing.T) {
	for _, c := range []struct{ interval, measure, want time.Duration }{
		{interval: 15 * time.Second, measure: 5 * time.Second, want: maxTickGrain},
		{interval: 15 * time.Second, want: maxTickGrain},
		{interval: time.Hour, measure: 300 * time.Millisecond, want: 37500 * time.Microsecond},
		{interval: 20 * time.Millisecond, want: 2500 * time.Microsecond},
		{interval: time.Microsecond, want: time.Millisecond},
	} {
		if got := tickGrain(c.interval, c.measure); got != c.want {
			t.Errorf("tickGrain(%v, %v) = %v, want %v", c.interval, c.measure, got, c.want)
		}
	}
}

// Two connections started apart, with the same periods, are pinged and
// measured at the same grid instants: their timers share wake-ups.
func TestKeepAlivesStartedApartTickTogether(t *testing.T) {
	var a, b KeepAlive
	ticks := make(chan time.Duration, 16)
	tick := func() { ticks <- grid.Now() }
	a.MeasureEvery(800 * time.Millisecond)
	b.MeasureEvery(800 * time.Millisecond)
	grain := tickGrain(time.Hour, 800*time.Millisecond)
	// Start off the grid, 60 % of a grain past it: without the grid the
	// ticks would land there too. The first measurements are made at once,
	// off the grid; the next ones must land on it.
	now := grid.Now()
	time.Sleep(grain - now%grain + 6*grain/10)
	a.Start(time.Hour, hooks{ping: func() {}, measure: tick})
	time.Sleep(13 * time.Millisecond)
	b.Start(time.Hour, hooks{ping: func() {}, measure: tick})
	defer a.Stop()
	defer b.Stop()
	for i := range 6 {
		select {
		case at := <-ticks:
			if i < 2 {
				continue
			}
			// A timer is never early; a busy machine may make it late.
			if off := at % grain; off > grain/2 {
				t.Errorf("a tick at %v, %v past the grid of %v", at, off, grain)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("fewer than 6 ticks in 3 s")
		}
	}
}

// Up to MaxRoundTripsPerSecond a second in all, every connection keeps the
// interval it asked for; past it, each measures less often, so that the
// process's connections together measure at that rate.
func TestRoundTripBudgetSpacesMeasurementsPastItsRate(t *testing.T) {
	for _, c := range []struct {
		measuring   int64
		every, want time.Duration
	}{
		{measuring: 1, every: 5 * time.Second, want: 5 * time.Second},
		{measuring: 1000, every: 5 * time.Second, want: 5 * time.Second},
		{measuring: 2000, every: 5 * time.Second, want: 10 * time.Second},
		{measuring: 10000, every: 5 * time.Second, want: 50 * time.Second},
		{measuring: 10, every: 20 * time.Millisecond, want: 50 * time.Millisecond},
	} {
		var b roundTripBudget
		b.measuring.Store(c.measuring)
		if got := b.period(c.every); got != c.want {
			t.Errorf("%d connections measuring every %v: period %v, want %v", c.measuring, c.every, got, c.want)
		}
	}
}

// A keep-alive counts in its budget from Start to Stop when it measures,
// once however often it is stopped, and never when stopped before Start
// or not measuring.
func TestKeepAlivesJoinTheBudgetFromStartToStop(t *testing.T) {
	var b roundTripBudget
	noop := hooks{ping: func() {}, measure: func() {}}
	ks := make([]*KeepAlive, 3)
	for i := range ks {
		ks[i] = &KeepAlive{budget: &b}
		ks[i].MeasureEvery(time.Hour)
		ks[i].Start(time.Hour, noop)
	}
	silent := &KeepAlive{budget: &b}
	silent.Start(time.Hour, noop)
	stoppedFirst := &KeepAlive{budget: &b}
	stoppedFirst.MeasureEvery(time.Hour)
	stoppedFirst.Stop()
	stoppedFirst.Start(time.Hour, noop)
	if n := b.measuring.Load(); n != 3 {
		t.Fatalf("%d connections counted, want the 3 measuring ones", n)
	}
	ks[0].Start(time.Hour, noop) // started twice: still counted once
	ks[0].Stop()
	ks[0].Stop()
	silent.Stop()
	if n := b.measuring.Load(); n != 2 {
		t.Errorf("%d connections counted after one of them stopped twice, want 2", n)
	}
	ks[1].Stop()
	ks[2].Stop()
	if n := b.measuring.Load(); n != 0 {
		t.Errorf("%d connections counted after all stopped, want 0", n)
	}
}

// With the budget taken by 12,000 other connections, a connection asking
// to measure every 50 ms measures once in Start and then not for a minute;
// beside it, one with a budget of its own measures every 50 ms.
func TestKeepAliveMeasuresLessOftenWhenTheBudgetIsShared(t *testing.T) {
	var crowded, alone roundTripBudget
	crowded.measuring.Store(12000)
	var crowdedN, aloneN atomic.Int32
	a := &KeepAlive{budget: &crowded}
	b := &KeepAlive{budget: &alone}
	start := func(k *KeepAlive, n *atomic.Int32) {
		k.MeasureEvery(50 * time.Millisecond)
		k.Start(time.Hour, hooks{ping: func() {}, measure: func() { n.Add(1) }})
		t.Cleanup(k.Stop)
	}
	start(a, &crowdedN)
	start(b, &aloneN)
	deadline := time.Now().Add(3 * time.Second)
	for aloneN.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := aloneN.Load(); n < 5 {
		t.Fatalf("the connection alone measured %d times in 3 s at 50 ms", n)
	}
	if n := crowdedN.Load(); n != 1 {
		t.Errorf("the connection sharing the budget measured %d times, want 1 (in Start)", n)
	}
}

// When the crowd sharing the budget leaves, a connection measures at its
// own interval again by its next tick, not a whole crowded period later.
func TestKeepAliveMeasuresSoonerWhenTheCrowdLeaves(t *testing.T) {
	var b roundTripBudget
	b.measuring.Store(12000)
	var n atomic.Int32
	k := &KeepAlive{budget: &b}
	k.MeasureEvery(50 * time.Millisecond)
	k.Start(100*time.Millisecond, hooks{ping: func() {}, measure: func() { n.Add(1) }})
	t.Cleanup(k.Stop)
	time.Sleep(300 * time.Millisecond)
	if got := n.Load(); got != 1 {
		t.Fatalf("%d measurements while crowded, want 1 (in Start)", got)
	}
	b.measuring.Store(1)
	deadline := time.Now().Add(3 * time.Second)
	for n.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := n.Load(); got < 3 {
		t.Errorf("%d measurements in 3 s after the crowd left, want at least 3", got)
	}
}
