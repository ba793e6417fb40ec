// Package promtooltest runs promtool for the tests that check hubprobe's
// rules and dashboard queries with Prometheus's own engine: Debian's
// (Prometheus 2.x, on PATH) and the Prometheus 3 that scripts/test.sh
// builds from its Go module into Prometheus3Dir.
package promtooltest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Prometheus3Version is the release of Prometheus 3 scripts/test.sh builds,
// as its Go module numbers it (v0.316.0 is Prometheus 3.16.0).
const Prometheus3Version = "v0.316.0"

// Prometheus3Subdir is where, under $(go env GOPATH)/bin, scripts/test.sh
// installs Prometheus 3's prometheus and promtool: a directory of their own,
// so that Debian's prometheus and promtool on PATH stay what they are.
const Prometheus3Subdir = "prometheus3"

// Tool is one promtool: a name for subtests and its path.
type Tool struct {
	Name, Path string
}

// GoBin is $(go env GOPATH)/bin (its first entry), where scripts/test.sh
// installs the Go tools the tests run.
var GoBin = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), string(os.PathListSeparator))
	return filepath.Join(first, "bin"), nil
})

// Prometheus3Dir is the directory holding Prometheus 3's prometheus and
// promtool. A missing one fails the test, never skips it.
func Prometheus3Dir(t testing.TB) string {
	t.Helper()
	bin, err := GoBin()
	if err != nil {
		t.Fatalf("go env GOPATH: %v", err)
	}
	dir := filepath.Join(bin, Prometheus3Subdir)
	for _, name := range []string{"prometheus", "promtool"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode()&0o111 == 0 {
			t.Fatalf("Prometheus 3's %s is not in %s: run scripts/test.sh, which builds it with go install "+
				"github.com/prometheus/prometheus/cmd/%s@%s", name, dir, name, Prometheus3Version)
		}
	}
	return dir
}

// Debian is Debian's promtool, on PATH. A missing one fails the test.
func Debian(t testing.TB) Tool {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		ci := ""
		if os.Getenv("CI") != "" {
			ci = " CI must install it before running the tests."
		}
		t.Fatalf("promtool is not on PATH: install Debian's prometheus package (apt-get install -y prometheus), as scripts/test.sh does.%s", ci)
	}
	return Tool{Name: "prometheus2", Path: path}
}

// Both are Debian's promtool and Prometheus 3's, in that order.
func Both(t testing.TB) []Tool {
	t.Helper()
	return []Tool{Debian(t), {Name: "prometheus3", Path: filepath.Join(Prometheus3Dir(t), "promtool")}}
}

// Run runs Debian's promtool and fails the test on a non-zero exit.
func Run(t testing.TB, args ...string) string {
	t.Helper()
	return Debian(t).Run(t, args...)
}

// Run runs this promtool and fails the test on a non-zero exit.
func (p Tool) Run(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, p.Path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s promtool %s: %v\n%s", p.Name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
