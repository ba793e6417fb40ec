package clientconn

import (
	"sync/atomic"
	"testing"
	"time"
)

// The tick is driven by hand (the timer is an hour away), so the check
// does not depend on timing: no ping right after the start or a write, a
// ping once the connection was silent for a whole interval, none after
// Stop, and a stopped keep-alive does not re-arm.
func TestKeepAlivePingsOnlyAfterAWholeIdleInterval(t *testing.T) {
	var k KeepAlive
	var pings atomic.Int32
	k.Start(time.Hour, func() { pings.Add(1) })
	k.tick()
	k.MarkWritten()
	k.tick()
	if n := pings.Load(); n != 0 {
		t.Fatalf("%d pings within the interval, want 0", n)
	}
	k.lastWrite.Store(int64(time.Since(k.started) - 2*time.Hour))
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
	k.Start(20*time.Millisecond, func() { pinged <- struct{}{} })
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

// The round trip is measured at once and then every interval, however
// busy the connection is with writes, on the keep-alive's own timer.
func TestKeepAliveMeasuresRoundTripsOnItsTimer(t *testing.T) {
	var k KeepAlive
	var pings atomic.Int32
	measured := make(chan time.Time, 8)
	k.MeasureEvery(300*time.Millisecond, func() { measured <- time.Now() })
	began := time.Now()
	k.Start(time.Hour, func() { pings.Add(1) })
	defer k.Stop()
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
