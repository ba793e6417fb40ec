package deploy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// toolTimeout bounds every command these tests run; a ko build of hubprobe
// on a cold build cache is the slowest.
const toolTimeout = 5 * time.Minute

// goBin is where `go install` puts the tools scripts/test.sh builds.
var goBin = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), string(os.PathListSeparator))
	return filepath.Join(first, "bin"), nil
})

// goTool finds a tool scripts/test.sh installs with `go install pkg@version`:
// the pinned build in $(go env GOPATH)/bin first, else one on PATH. A missing
// tool fails the test: without it nothing is checked.
func goTool(t *testing.T, name string) string {
	t.Helper()
	if dir, err := goBin(); err == nil {
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	t.Fatalf("%s is neither in $(go env GOPATH)/bin nor on PATH: run scripts/test.sh, which installs it with go install at the pinned version", name)
	return ""
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// kubectl finds kubectl, which scripts/test.sh installs from the Debian
// archive.
func kubectl(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is not on PATH: install the kubectl package (apt-get install -y kubectl; Debian's own kubernetes-client 1.20 is too old for this kustomization)")
	}
	return path
}

// run runs a command under toolTimeout with env added to the test's
// environment and returns its standard output; a failure fails the test
// with its standard error.
func run(t *testing.T, env []string, name string, args ...string) []byte {
	t.Helper()
	out, stderr, err := runResult(env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr)
	}
	return out
}

func runResult(env []string, name string, args ...string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	return out, errBuf.Bytes(), err
}
