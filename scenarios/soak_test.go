package scenarios_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// soakRuns is how many runs the accelerated soak makes; HUBPROBE_SOAK_RUNS
// raises it for a longer local soak.
func soakRuns(t *testing.T) int {
	if v := os.Getenv("HUBPROBE_SOAK_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("HUBPROBE_SOAK_RUNS=%q: %v", v, err)
		}
		return n
	}
	return 3000
}

// soakKinds are the kinds the soak cycles through.
var soakKinds = []string{"echo", "broadcast", "send_to_group", "send_to_client", "streaming_echo"}

// soakTargets makes run i of the soak: one in six goes to a target that is
// not listening (i%6 == 5), the others to the healthy hub.
type soakTargets struct {
	hubURL, deadURL string
	rec             *scenariostest.Recorder
}

func (st soakTargets) run(i int) scenarios.Result {
	s := scenario(soakKinds[i%5], 4, 40*time.Millisecond, 10*time.Millisecond)
	s.GroupSize, s.LossTimeout = 2, 3*time.Second
	url := st.hubURL
	if i%6 == 5 {
		url = st.deadURL
	}
	runner := &scenarios.Runner{Scenario: s, Endpoint: scenariostest.SignalR(url), Recorder: st.rec}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return runner.Run(ctx)
}

// soak makes runs 1 to n on 8 workers and counts the runs against the dead
// target that failed, and the runs against the hub that failed or lost.
func (st soakTargets) soak(t *testing.T, n int) (failed, unexpected int64) {
	var failedN, unexpectedN atomic.Int64
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				res := st.run(i)
				switch {
				case i%6 == 5 && res.Outcome == scenarios.ResultFailure:
					failedN.Add(1)
				case i%6 != 5 && (res.Outcome != scenarios.ResultSuccess || res.Lost != 0):
					unexpectedN.Add(1)
					t.Logf("run %d (%s): %s, lost %d", i, res.Kind, res.Error, res.Lost)
				}
			}
		}()
	}
	for i := 1; i <= n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	return failedN.Load(), unexpectedN.Load()
}

// TestAcceleratedSoak makes many short runs, one in six against a target
// that is not listening, and checks that goroutines and heap come back to
// where they started: nothing leaks per run, failed or not.
func TestAcceleratedSoak(t *testing.T) {
	srv := hubtest.Start(t, hub.Options{})
	dead := startThirdParty(t)
	deadURL := dead.URL
	dead.Close()
	st := soakTargets{hubURL: srv.URL(), deadURL: deadURL, rec: scenariostest.NewRecorder()}
	st.run(0) // warm up pools and lazily started goroutines
	baseGoroutines, baseHeap := settle()

	n := soakRuns(t)
	failed, unexpected := st.soak(t, n)

	goroutines, heap := settle()
	t.Logf("%d runs: goroutines %d → %d, heap %d KiB → %d KiB", n, baseGoroutines, goroutines, baseHeap>>10, heap>>10)
	if unexpected > 0 {
		t.Errorf("%d runs against the healthy hub failed or lost messages", unexpected)
	}
	if want := int64(n / 6); failed != want {
		t.Errorf("%d runs against the dead target failed, want %d", failed, want)
	}
	if goroutines > baseGoroutines+5 {
		t.Errorf("goroutines grew from %d to %d over %d runs", baseGoroutines, goroutines, n)
	}
	if heap > baseHeap+32<<20 {
		t.Errorf("heap grew from %d KiB to %d KiB over %d runs", baseHeap>>10, heap>>10, n)
	}
}

// settle waits for closing connections to finish, then reads the goroutine
// count and live heap.
func settle() (goroutines int, heap uint64) {
	deadline := time.Now().Add(5 * time.Second)
	prev := -1
	for time.Now().Before(deadline) {
		runtime.GC()
		g := runtime.NumGoroutine()
		if g == prev {
			break
		}
		prev = g
		time.Sleep(200 * time.Millisecond)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}
