package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/throttle"
)

// pausedTargets has one echo scenario on each of two embedded targets;
// the hour-long schedule leaves each applied scenario one run, right away.
const pausedTargets = `
global:
  start_jitter: false
targets:
  - name: local
    embedded: true
  - name: other
    embedded: true
scenarios:
  - &echo
    name: held
    target: local
    kind: echo
    schedule: "@every 1h"
    duration: DURATION
    connections: 2
    send_interval: 100ms
    loss_timeout: 1s
  - <<: *echo
    name: free
    target: other
`

// The daemon keeps one pause per target across the scheduler and a
// reload: after the target throttled, a scenario the reload changed, run
// on a new job, still holds its sends; a scenario of another target does not.
func TestReloadKeepsEachTargetsPause(t *testing.T) {
	d, path := newDaemon(t, strings.ReplaceAll(pausedTargets, "DURATION", "300ms"))
	waitForRuns(t, d, 2)
	d.pauses.For("local").Throttle(throttle.HTTP429, time.Minute, time.Now())

	writeConfig(t, path, strings.ReplaceAll(pausedTargets, "DURATION", "600ms"))
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	runs := waitForRuns(t, d, 4)
	held, free := runs[0], runs[1] // newest first
	if held.Scenario != "held" {
		held, free = free, held
	}
	const want = "throttled (http_429): 12 sends fell due while the target was paused after throttling"
	if held.Scenario != "held" || held.Outcome != scenarios.ResultFailure || held.Sent != 0 || held.Paused != 12 || held.Error != want {
		t.Errorf("%s after the reload: outcome %s (%s), sent %d, paused %d; want all 12 sends held by the target's pause",
			held.Scenario, held.Outcome, held.Error, held.Sent, held.Paused)
	}
	if free.Scenario != "free" || free.Outcome != scenarios.ResultSuccess || free.Sent != 12 || free.Paused != 0 {
		t.Errorf("%s after the reload: outcome %s (%s), sent %d, paused %d; want all 12 sent",
			free.Scenario, free.Outcome, free.Error, free.Sent, free.Paused)
	}
}

// waitForRuns waits, at most 20 s, until the status page holds n runs, and
// returns them newest first.
func waitForRuns(t *testing.T, d *Daemon, n int) []scenarios.Result {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		runs := d.history.Recent()
		if len(runs) >= n {
			return runs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs after 20 s, want %d", len(runs), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
