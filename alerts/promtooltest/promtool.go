// Package promtooltest runs Debian's promtool for the tests that check hubprobe's
// rules and dashboard queries with Prometheus's own engine.
package promtooltest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Run runs promtool and fails the test on a non-zero exit. A missing
// promtool is a failure, never a skip: without it nothing is proven.
func Run(t testing.TB, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		ci := ""
		if os.Getenv("CI") != "" {
			ci = " CI must install it before running the tests."
		}
		t.Fatalf("promtool is not on PATH: install Debian's prometheus package (apt-get install -y prometheus), as scripts/test.sh does.%s", ci)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
