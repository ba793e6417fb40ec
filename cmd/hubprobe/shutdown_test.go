package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/faulthubtest"
)

// SIGTERM on a real process in the middle of a run: the run is cancelled,
// every probe connection sends a Close message, the log says so and the
// process exits 0, all within a bounded time.
func TestSIGTERMClosesConnectionsAndExitsZero(t *testing.T) {
	hub, err := faulthubtest.Start(faulthubtest.Script{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	cfg := strings.NewReplacer("embedded: true", "url: "+hub.URL(), "duration: 1s", "duration: 50s", "schedule: \"@every 1h\"", "schedule: \"@every 1m\"").Replace(quickEcho)
	hubprobe, _ := childOnFreePort(t, "the run to be sending", 15*time.Second, nil, []string{"--config.file", writeConfig(t, cfg)},
		"--web.listen-address", func(string) bool { return hub.Counts().Echoes >= 6 })

	began := time.Now()
	if err := hubprobe.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var stderr string
	select {
	case err := <-hubprobe.exited:
		stderr = hubprobe.log.String()
		if err != nil {
			t.Fatalf("hubprobe exited with %v after SIGTERM, want 0\n%s", err, stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("hubprobe still running 15 s after SIGTERM")
	}
	took := time.Since(began)
	if got := hub.Counts().Closes; got != 3 {
		t.Errorf("hub read %d Close messages, want one per connection (3)", got)
	}
	if !strings.Contains(stderr, "shutting down") {
		t.Errorf("log does not record the shutdown:\n%s", stderr)
	}
	t.Logf("exited %v after SIGTERM", took.Round(time.Millisecond))
}
