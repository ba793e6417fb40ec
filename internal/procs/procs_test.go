package procs

import (
	"context"
	"runtime"
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
		if got := s.observe(st.cores); got != st.wantChange || s.one != st.wantOne {
			t.Fatalf("tick %d (%.2f cores): change %v, one %v; want %v, %v", i, st.cores, got, s.one, st.wantChange, st.wantOne)
		}
	}
}

// Run on a real, idle process moves it to one processor, gives the
// default back as soon as a goroutine keeps a core busy, and gives the
// default back when it ends.
func TestRunFollowsTheProcesssCPUUse(t *testing.T) {
	if runtime.GOMAXPROCS(0) == 1 {
		t.Skip("one processor is the default here: nothing to size")
	}
	defer func(d time.Duration) { tick = d }(tick)
	tick = 20 * time.Millisecond
	defaultProcs := runtime.GOMAXPROCS(0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Run(ctx, zerolog.Nop()); close(done) }()

	waitFor(t, "one processor while idle", func() bool { return runtime.GOMAXPROCS(0) == 1 })
	stop := make(chan struct{})
	go spin(stop)
	waitFor(t, "the default while a core is busy", func() bool { return runtime.GOMAXPROCS(0) == defaultProcs })
	close(stop)
	waitFor(t, "one processor once idle again", func() bool { return runtime.GOMAXPROCS(0) == 1 })
	cancel()
	<-done
	if got := runtime.GOMAXPROCS(0); got != defaultProcs {
		t.Fatalf("after Run ended: %d processors, want the default %d", got, defaultProcs)
	}
}

func TestRunLeavesAnExplicitGOMAXPROCSAlone(t *testing.T) {
	t.Setenv("GOMAXPROCS", "2")
	before := runtime.GOMAXPROCS(0)
	done := make(chan struct{})
	go func() { Run(context.Background(), zerolog.Nop()); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run kept running with GOMAXPROCS set")
	}
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("GOMAXPROCS changed from %d to %d", before, got)
	}
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
