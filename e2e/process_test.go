package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the module root: the tests run in e2e/, one level below it.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found above the e2e package: %v", err)
	}
	return root
}

// freeAddress returns a loopback address nothing listens on right now. It
// is free only when picked: another process may bind it before the process
// under test does, as startOnFreeAddress allows for.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// listenAttempts bounds how often startOnFreeAddress starts a process again.
const listenAttempts = 3

// addressTaken is what hubprobe and Prometheus log when the address they
// were given is bound by another process.
const addressTaken = "address already in use"

// startOnFreeAddress starts a process on a free loopback address with
// start, and waits until readyPath answers 200 there. Another process may
// bind the address between freeAddress and the process: hubprobe and
// Prometheus then exit at once saying so, and startOnFreeAddress starts it
// again on another address. The caller stops the process it returns.
func startOnFreeAddress(ctx context.Context, t *testing.T, start func(addr string) *process, readyPath string) (*process, string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		addr := freeAddress(t)
		p := start(addr)
		readyCtx, cancel := context.WithTimeout(ctx, readyLimit)
		err := p.waitReady(readyCtx, "http://"+addr+readyPath)
		cancel()
		if err == nil {
			return p, addr
		}
		if attempt == listenAttempts || !p.exitedSaying(addressTaken) {
			_, _ = p.stop(0)
			t.Fatalf("%v\n%s log (last lines):\n%s", err, p.name, p.logTail(30))
		}
		t.Logf("%s: %s was taken before it listened there; again on another address", p.name, addr)
	}
}

// buildHubprobe compiles the daemon into a temporary directory.
func buildHubprobe(ctx context.Context, t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hubprobe")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/hubprobe")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/hubprobe: %v\n%s", err, out)
	}
	return bin
}

// process is a child process whose output goes to a log file, so that a
// failing test can show what it said.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	waitErr error
}

func startProcess(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	return startProcessWithEnv(t, name, bin, nil, args...)
}

// startProcessWithEnv starts bin with env as its whole environment; nil
// passes the test's own on.
func startProcessWithEnv(t *testing.T, name, bin string, env []string, args ...string) *process {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = childAttributes()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return p
}

// stop sends SIGTERM and waits up to grace for the process to exit, then
// kills it. It reports whether the process exited by itself, and its exit
// error (nil for status 0).
func (p *process) stop(grace time.Duration) (exitedInTime bool, err error) {
	select {
	case <-p.exited:
		return true, p.waitErr
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true, p.waitErr
	case <-timer.C:
		_ = p.cmd.Process.Kill()
		<-p.exited
		return false, p.waitErr
	}
}

// exitedSaying tells whether the process has exited with s in its last lines.
func (p *process) exitedSaying(s string) bool {
	select {
	case <-p.exited:
		return strings.Contains(p.logTail(20), s)
	default:
		return false
	}
}

// logTail returns the last lines the process wrote.
func (p *process) logTail(lines int) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var all []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		all = append(all, sc.Text())
	}
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// waitReady polls url until it answers 200, the process exits, or ctx ends.
func (p *process) waitReady(ctx context.Context, url string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		lastErr := get200(ctx, url)
		if lastErr == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before it was ready (%v)", p.name, p.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s: %w", p.name, url, lastErr)
		case <-tick.C:
		}
	}
}

func get200(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}
