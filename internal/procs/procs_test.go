package procs

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestSizerMovesToOneProcessorAfterTenQuietTicksAndBackAtOnce(t *testing.T) {
	var s sizer
	steps := []struct {
		cores      float64
		wantChange bool
		wantOne    bool
	}{
		{0.30, false, false}, // busy: the default stays
		{0.05, false, false}, {0.05, false, false}, {0.05, false, false}, {0.05, false, false},
		{0.20, false, false}, // one busy tick starts the count again
		{0.01, false, false}, {0.01, false, false}, {0.01, false, false}, {0.01, false, false}, {0.01, false, false},
		{0.01, false, false}, {0.01, false, false}, {0.01, false, false}, {0.01, false, false},
		{0.01, true, true},  // the tenth quiet tick in a row
		{0.25, false, true}, // under a third of the one processor: stays
		{0.00, false, true},
		{0.70, true, false},  // busy: back to the default at once
		{0.01, false, false}, // and ten quiet ticks again before one
	}
	for i, st := range steps {
		if got := s.observe(st.cores); got != st.wantChange || s.idle != st.wantOne {
			t.Fatalf("tick %d (%.2f cores): change %v, idle %v; want %v, %v", i, st.cores, got, s.idle, st.wantChange, st.wantOne)
		}
	}
}

// Run on a real, idle process (a test binary's heap is well under 8 MiB)
// moves it to one processor (where one is the default, it stays there)
// and a larger heap target, gives the defaults back as soon as a goroutine keeps a core
// busy, and gives them back when it ends.
func TestRunFollowsTheProcesssCPUUse(t *testing.T) {
	defer func(d time.Duration) { tick = d }(tick)
	tick = 20 * time.Millisecond
	defaultProcs := runtime.GOMAXPROCS(0)
	idle := func() bool {
		return runtime.GOMAXPROCS(0) == 1 && gcPercent() == idleGCPercent(liveHeap()) && gcPercent() > defaultGCPercent
	}
	busy := func() bool { return runtime.GOMAXPROCS(0) == defaultProcs && gcPercent() == defaultGCPercent }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Run(ctx, zerolog.Nop()); close(done) }()

	waitFor(t, "one processor and a larger heap target while idle", idle)
	stop := make(chan struct{})
	go spin(stop)
	waitFor(t, "the defaults while a core is busy", busy)
	close(stop)
	waitFor(t, "one processor and a larger heap target once idle again", idle)
	cancel()
	<-done
	if !busy() {
		t.Fatalf("after Run ended: %d processors, GOGC=%d; want the defaults %d, %d", runtime.GOMAXPROCS(0), gcPercent(), defaultProcs, defaultGCPercent)
	}
}

func TestRunLeavesAnExplicitGOMAXPROCSAndGOGCAlone(t *testing.T) {
	t.Setenv("GOMAXPROCS", "2")
	t.Setenv("GOGC", "150")
	defer debug.SetGCPercent(debug.SetGCPercent(150)) // what GOGC=150 gives at start
	before := runtime.GOMAXPROCS(0)
	done := make(chan struct{})
	go func() { Run(context.Background(), zerolog.Nop()); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run kept running with GOMAXPROCS and GOGC set")
	}
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("GOMAXPROCS changed from %d to %d", before, got)
	}
	if got := gcPercent(); got != 150 {
		t.Fatalf("GOGC changed from 150 to %d", got)
	}
}

// With only GOGC set, Run still sizes the processors (where there is more
// than one) and leaves the heap target alone.
func TestRunSizesOnlyWhatTheEnvironmentLeavesFree(t *testing.T) {
	t.Setenv("GOGC", "150")
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	defer func(d time.Duration) { tick = d }(tick)
	tick = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Run(ctx, zerolog.Nop()); close(done) }()
	waitFor(t, "one processor while idle", func() bool { return runtime.GOMAXPROCS(0) == 1 })
	cancel()
	<-done
	if got := gcPercent(); got != 150 {
		t.Fatalf("GOGC changed from 150 to %d", got)
	}
}

func TestIdleHeadroomIsEightMiBBetweenTheDefaultAndTwiceIt(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 200}, {1 << 20, 200}, {8 << 20 / 2, 200}, {6 << 20, 133}, {8 << 20, 100}, {64 << 20, 100},
	} {
		if got := idleGCPercent(c.live); got != c.want {
			t.Errorf("live heap %d B: GOGC %d, want %d", c.live, got, c.want)
		}
	}
}

// gcPercent reads the heap target without setting it.
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10 s (GOMAXPROCS %d)", what, runtime.GOMAXPROCS(0))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// spin keeps a core busy until stop closes.
func spin(stop <-chan struct{}) {
	for n := 0; ; n++ {
		if n%1_000_000 == 0 {
			select {
			case <-stop:
				return
			default:
			}
		}
	}
}
