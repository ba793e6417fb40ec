package main

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is one measured process. It runs in its own process group and is
// killed with its parent (Pdeathsig), so nothing outlives loadbench.
type child struct {
	name   string
	cmd    *exec.Cmd
	stderr *tailBuffer
	done   chan struct{}
	err    error // valid after done
}

func startChild(name string, argv []string, stdout io.Writer) (*child, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c := &child{name: name, cmd: cmd, stderr: &tailBuffer{max: 4096}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = stdout, c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		c.err = cmd.Wait()
		if cl, ok := stdout.(io.Closer); ok {
			_ = cl.Close()
		}
		close(c.done)
	}()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop asks the process group to end, then kills it after grace. It returns
// once the process has been reaped.
func (c *child) stop(grace time.Duration) {
	select {
	case <-c.done:
		return
	default:
	}
	_ = syscall.Kill(-c.pid(), syscall.SIGTERM)
	_ = syscall.Kill(-c.pid(), syscall.SIGCONT) // a held process handles SIGTERM only once continued
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = syscall.Kill(-c.pid(), syscall.SIGKILL)
		<-c.done
	}
}

// cpuAtExit is user+sys from the rusage of the reaped process.
func (c *child) cpuAtExit() float64 {
	st := c.cmd.ProcessState
	return (st.UserTime() + st.SystemTime()).Seconds()
}

// failure describes an ended process for an error message, with the end
// of its stderr. Call it only once done is closed.
func (c *child) failure() error {
	status := errors.New("exited with status 0")
	if c.err != nil {
		status = c.err
	}
	if msg := strings.TrimSpace(c.stderr.String()); msg != "" {
		return fmt.Errorf("%s: %w: %s", c.name, status, msg)
	}
	return fmt.Errorf("%s: %w", c.name, status)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

var errExitedEarly = errors.New("exited before the window ended")
