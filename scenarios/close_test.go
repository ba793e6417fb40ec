package scenarios_test

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/faulthubtest"
	"github.com/hubprobe/hubprobe/scenarios"
)

// A run ends every connection with a Close message, so the hub sees clean
// closes rather than dropped sockets.
func TestRunClosesEveryConnectionCleanly(t *testing.T) {
	t.Parallel()
	srv, err := faulthubtest.Start(faulthubtest.Script{Fault: faulthubtest.Healthy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	o := runAgainst(t, srv.URL(), scenario("echo", 3, 300*time.Millisecond, 100*time.Millisecond))
	if o.res.Outcome != scenarios.ResultSuccess {
		t.Fatalf("outcome %s (%s), want success", o.res.Outcome, o.res.Error)
	}
	// The hub reads the Close messages on its own goroutines.
	for deadline := time.Now().Add(2 * time.Second); srv.Counts().Closes < 3 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if got := srv.Counts().Closes; got != 3 {
		t.Errorf("the hub read %d Close messages from the run's 3 connections, want 3", got)
	}
}
