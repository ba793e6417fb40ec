package main

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/faulttest"
)

// SIGTERM on a real process in the middle of a run: the run is cancelled,
// every probe connection sends a Close message, the log says so and the
// process exits 0, all within a bounded time.
func TestSIGTERMClosesConnectionsAndExitsZero(t *testing.T) {
	hub, err := faulttest.Start(faulttest.Script{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	bin := hubprobeBinary(t)
	cfg := strings.NewReplacer("embedded: true", "url: "+hub.URL(), "duration: 1s", "duration: 50s", "schedule: \"@every 1h\"", "schedule: \"@every 1m\"").Replace(quickEcho)
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "--config.file", writeConfig(t, cfg), "--web.listen-address", freePort(t))
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	waitFor(t, "the run to be sending", 15*time.Second, func() bool { return hub.Counts().Echoes >= 6 })

	began := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("hubprobe exited with %v after SIGTERM, want 0\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("hubprobe still running 15 s after SIGTERM\n%s", stderr.String())
	}
	took := time.Since(began)
	if got := hub.Counts().Closes; got != 3 {
		t.Errorf("hub read %d Close messages, want one per connection (3)", got)
	}
	if !strings.Contains(stderr.String(), "shutting down") {
		t.Errorf("log does not record the shutdown:\n%s", stderr.String())
	}
	t.Logf("exited %v after SIGTERM", took.Round(time.Millisecond))
}
