package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// freePort returns a loopback address nothing listens on right now. It is
// free only when picked: a command given it may find it taken by then, as
// onFreePort allows for.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// portAttempts bounds how often onFreePort starts a command on another port.
const portAttempts = 3

// addressTaken is what a command says when another process bound the
// address it was given.
const addressTaken = "address already in use"

// exited tells whether a command a test started has ended, and its log then.
type exited func() (ended bool, log string)

// exitedOf watches a command whose end sends its result on done, a
// channel of capacity 1; the result is put back for the test to read.
func exitedOf[T any](done chan T, log *bytes.Buffer) exited {
	return func() (bool, string) {
		select {
		case v := <-done:
			done <- v
			return true, log.String()
		default:
			return false, ""
		}
	}
}

// onFreePort starts a command on a free loopback address with start and
// waits up to limit for ready(addr), and returns the address. Another
// process may bind the address between freePort and the command: the
// command then exits at once saying so (hubprobe claims the addresses it is
// given before it starts anything else), and onFreePort starts it again on
// another address.
func onFreePort(t *testing.T, what string, limit time.Duration, start func(addr string) exited, ready func(addr string) bool) string {
	t.Helper()
	for attempt := 1; ; attempt++ {
		addr := freePort(t)
		failed, why := waitReady(limit, start(addr), func() bool { return ready(addr) })
		switch {
		case !failed:
			return addr
		case strings.Contains(why, addressTaken) && attempt < portAttempts:
			t.Logf("%s was taken before the command listened on it; again on another address", addr)
		default:
			t.Fatalf("%s on %s: %s", what, addr, why)
		}
	}
}

// waitReady polls ready until it holds (failed false). It fails when the
// command ends first, with the command's log, or at limit.
func waitReady(limit time.Duration, state exited, ready func() bool) (failed bool, why string) {
	deadline := time.Now().Add(limit)
	for {
		if ended, log := state(); ended {
			return true, "the command ended first:\n" + log
		}
		if ready() {
			return false, ""
		}
		if time.Now().After(deadline) {
			return true, "not ready after " + limit.String()
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// inProcess is a command that run runs in a goroutine of the test.
type inProcess struct {
	done chan int      // its exit code, once
	log  *bytes.Buffer // its stderr: read it once done has answered
}

// runOnFreePort runs args, then flag and a free loopback address, through
// run until ctx ends, and waits up to limit for ready, as onFreePort does.
func runOnFreePort(t *testing.T, ctx context.Context, what string, limit time.Duration, args []string, flag string, ready func(addr string) bool) (*inProcess, string) {
	t.Helper()
	var p *inProcess
	addr := onFreePort(t, what, limit, func(addr string) exited {
		p = &inProcess{done: make(chan int, 1), log: &bytes.Buffer{}}
		all := append(slices.Clone(args), flag, addr)
		go func() { p.done <- run(ctx, all, io.Discard, p.log) }()
		return exitedOf(p.done, p.log)
	}, ready)
	return p, addr
}

// child is the hubprobe binary run as a process of its own.
type child struct {
	cmd    *exec.Cmd
	exited chan error    // what Wait said, once
	log    *bytes.Buffer // its stdout and stderr: read it once exited has answered
}

// startChild starts the binary with args, and env added to the test's
// environment. It is killed at the test's end if it still runs then.
func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(hubprobeBinary(t), args...), exited: make(chan error, 1), log: &bytes.Buffer{}}
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { c.exited <- c.cmd.Wait(); close(waited) }()
	t.Cleanup(func() { _ = c.cmd.Process.Kill(); <-waited })
	return c
}

// childOnFreePort starts the binary with args, then flag and a free
// loopback address, and waits up to limit for ready, as onFreePort does.
func childOnFreePort(t *testing.T, what string, limit time.Duration, env, args []string, flag string, ready func(addr string) bool) (*child, string) {
	t.Helper()
	var c *child
	addr := onFreePort(t, what, limit, func(addr string) exited {
		c = startChild(t, env, append(slices.Clone(args), flag, addr)...)
		return exitedOf(c.exited, c.log)
	}, ready)
	return c, addr
}

// hubListens is ready for `hubprobe hub` on addr: it serves its metrics.
func hubListens(t *testing.T) func(addr string) bool {
	return func(addr string) bool { return get(t, "http://"+addr+"/metrics") != "" }
}

// daemonServes is ready for the daemon on addr: its metrics are served.
func daemonServes(t *testing.T) func(addr string) bool {
	return func(addr string) bool {
		_, ok := scrape(t, addr)["hubprobe_build_info"]
		return ok
	}
}

// childStopGrace bounds how long a child may take to exit after SIGTERM.
const childStopGrace = 10 * time.Second

// stop sends SIGTERM and returns what Wait said; a child still running
// childStopGrace later is killed, and that is the error.
func (c *child) stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.exited:
		return err
	case <-time.After(childStopGrace):
		_ = c.cmd.Process.Kill()
		return fmt.Errorf("still running %v after SIGTERM: killed (%v)", childStopGrace, <-c.exited)
	}
}

// A command that finds its address taken is started again on another
// one, and the address it listens on is the one returned.
func TestOnFreePortStartsAgainOnAnotherAddressWhenTaken(t *testing.T) {
	var tried []string
	addr := onFreePort(t, "a command", time.Second, func(addr string) exited {
		tried = append(tried, addr)
		taken := len(tried) == 1
		return func() (bool, string) { return taken, "listen tcp " + addr + ": bind: " + addressTaken }
	}, func(string) bool { return true })
	if len(tried) != 2 || addr != tried[1] {
		t.Errorf("tried %v, returned %s; want a second address, returned", tried, addr)
	}
}
