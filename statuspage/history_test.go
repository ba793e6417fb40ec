package statuspage

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
)

func TestHistoryBoundedAndFailuresPreserved(t *testing.T) {
	h := NewHistory(5)
	h.Add(run("echo", scenarios.ResultFailure, 0))
	h.Add(run("echo", scenarios.ResultFailure, 1))
	for i := 2; i < 12; i++ {
		h.Add(run("echo", scenarios.ResultSuccess, i))
	}

	recent := h.Recent()
	if len(recent) != 5 {
		t.Fatalf("%d recent runs kept, want 5", len(recent))
	}
	if got := recent[0].Start; !got.Equal(runStart.Add(11 * time.Minute)) {
		t.Errorf("newest recent run started %v, want run 11", got)
	}
	failures := h.Failures()
	if len(failures) != 2 || failures[0].Error != "run 1 failed" || failures[1].Error != "run 0 failed" {
		t.Fatalf("failures = %+v, want runs 1 and 0", failures)
	}
	recentSnap, older := h.snapshot()
	if len(recentSnap) != 5 || len(older) != 2 {
		t.Fatalf("snapshot: %d recent, %d older failures; want 5 and 2", len(recentSnap), len(older))
	}
}

func TestHistoryFailuresBounded(t *testing.T) {
	h := NewHistory(3)
	for i := range 10 {
		h.Add(run("echo", scenarios.ResultFailure, i))
	}
	failures := h.Failures()
	if len(failures) != 3 || failures[0].Error != "run 9 failed" || failures[2].Error != "run 7 failed" {
		t.Fatalf("failures = %v, want runs 9, 8, 7", failures)
	}
	// Failures that are still recent are not repeated as older ones.
	if _, older := h.snapshot(); len(older) != 0 {
		t.Fatalf("%d older failures, want 0", len(older))
	}
}

func TestHistoryLastSkipsSkippedRuns(t *testing.T) {
	h := NewHistory(0)
	if _, ok := h.Last("hub-a", "echo"); ok {
		t.Fatal("Last reported a run before any was added")
	}
	h.Add(run("echo", scenarios.ResultFailure, 1))
	h.Add(run("echo", scenarios.ResultSkipped, 2))
	h.Add(run("broadcast", scenarios.ResultSuccess, 3))
	last, ok := h.Last("hub-a", "echo")
	if !ok || last.Outcome != scenarios.ResultFailure || last.Error != "run 1 failed" {
		t.Fatalf("Last = %+v, %v; want the failed run 1", last, ok)
	}
	if got := len(h.Recent()); got != 3 {
		t.Fatalf("%d recent runs, want 3 (skipped runs are listed)", got)
	}
	h.Forget("hub-a", "echo")
	if _, ok := h.Last("hub-a", "echo"); ok {
		t.Fatal("Last still reports a forgotten scenario")
	}
}
