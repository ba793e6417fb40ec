package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// pairSpec says how to start one server and its client.
type pairSpec struct {
	name string
	// startServer starts the server and returns it once it accepts
	// connections, with the URL its client is given.
	startServer func(ctx context.Context) (*child, string, error)
	clientArgv  func(url string) ([]string, error)
}

// floorPair is the bare gorilla/websocket echo, run as two subcommands of
// this same binary.
func floorPair(o options) pairSpec {
	return pairSpec{
		name: pairFloor,
		startServer: func(ctx context.Context) (*child, string, error) {
			c, addr, err := startListening(ctx, "floor server", append(o.self, "floor-server", "-listen", "127.0.0.1:0"))
			return c, "ws://" + addr + "/", err
		},
		clientArgv: func(url string) ([]string, error) {
			return append(o.self, "floor-client", "-url", url,
				"-n", strconv.Itoa(o.n), "-window", o.window.String(), "-interval", o.interval.String(),
				"-size", strconv.Itoa(o.size), "-connect-concurrency", strconv.Itoa(o.concurrency),
				"-loss-timeout", o.lossTimeout.String()), nil
		},
	}
}

// startListening starts a server subcommand and returns it once it printed
// "listening WHERE", with WHERE.
func startListening(ctx context.Context, name string, argv []string) (*child, string, error) {
	lines := newLineWatch()
	c, err := startChild(name, argv, lines)
	if err != nil {
		return nil, "", err
	}
	where, err := lines.first(ctx, c, "listening ")
	if err != nil {
		c.stop(time.Second)
		return nil, "", err
	}
	return c, where, nil
}

// hubprobePair is `hubprobe hub` probed by `hubprobe run` with an echo
// scenario of the same shape as the floor client's run.
func hubprobePair(o options, binary, dir string) pairSpec {
	return hubRunPair(binary, pairHubprobe, "/signalrbench", filepath.Join(dir, "loadbench.yml"),
		func(url string) string { return hubprobeConfig(o, url) })
}

// hubRunPair is `hubprobe hub` probed at path by `hubprobe run` with the
// echo scenario config gives for the hub's URL, written to file.
func hubRunPair(binary, name, path, file string, config func(url string) string) pairSpec {
	return pairSpec{
		name: name,
		startServer: func(ctx context.Context) (*child, string, error) {
			addr, err := freeLoopbackAddr()
			if err != nil {
				return nil, "", err
			}
			c, err := startHub(ctx, "hubprobe hub ("+name+")", addr, binary, "hub", "--listen", addr)
			return c, "http://" + addr + path, err
		},
		clientArgv: func(url string) ([]string, error) {
			if err := os.WriteFile(file, []byte(config(url)), 0o600); err != nil {
				return nil, err
			}
			return []string{binary, "run", "--config.file", file, "--scenario", "echo", "--output", "json"}, nil
		},
	}
}

// startHub starts `hubprobe hub` listening on addr and returns it once it
// answers.
func startHub(ctx context.Context, name, addr string, argv ...string) (*child, error) {
	c, err := startChild(name, argv, io.Discard)
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, c, "http://"+addr+"/metrics"); err != nil {
		c.stop(time.Second)
		return nil, err
	}
	return c, nil
}

// hubprobeConfig is one echo scenario against url.
func hubprobeConfig(o options, url string) string { return echoConfig(o, "url: "+url) }

// echoConfig is one echo scenario against the target whose keys (after
// its name) are target. The schedule is never used by `hubprobe run`; it
// only has to be longer than the run's timeout.
func echoConfig(o options, target string) string {
	return fmt.Sprintf(`global:
  start_jitter: false
targets:
  - name: loadbench
    %s
scenarios:
  - name: echo
    target: loadbench
    kind: echo
    schedule: "@every 1h"
    timeout: %s
    duration: %s
    connections: %d
    connect_concurrency: %d
    connect_timeout: %s
    message_size: %d
    send_interval: %s
    loss_timeout: %s
`, target, o.scenarioTimeout(), o.window, o.n, o.concurrency, connectTimeout, o.size, o.interval, o.lossTimeout)
}

// buildHubprobe compiles ./cmd/hubprobe of the module loadbench runs in.
func buildHubprobe(ctx context.Context, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", fmt.Errorf("%w (or pass -hubprobe)", err)
	}
	out := filepath.Join(dir, "hubprobe")
	build := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/hubprobe")
	build.Dir = root
	if msg, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/hubprobe: %w: %s", err, msg)
	}
	return out, nil
}

// moduleRoot is the folder of the hubprobe module loadbench runs in.
func moduleRoot(ctx context.Context) (string, error) {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(gomod))
	if err != nil || mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("finding hubprobe's module (run loadbench inside the repository): %v", err)
	}
	return filepath.Dir(mod), nil
}

func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// waitHTTP polls url until it answers 200, the process exits or ctx ends.
func waitHTTP(ctx context.Context, c *child, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-c.done:
			return c.failure()
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer %s: %w", c.name, url, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lineWatch is a child's stdout that hands over its lines as they come.
type lineWatch struct {
	pw    *io.PipeWriter
	lines chan string
}

func newLineWatch() *lineWatch {
	pr, pw := io.Pipe()
	w := &lineWatch{pw: pw, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case w.lines <- sc.Text():
			default: // nobody waits for later lines
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	return w
}

func (w *lineWatch) Write(p []byte) (int, error) { return w.pw.Write(p) }

// Close ends the reading goroutine once the child has exited.
func (w *lineWatch) Close() error { return w.pw.Close() }

// first returns the rest of the first line starting with prefix.
func (w *lineWatch) first(ctx context.Context, c *child, prefix string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for {
		select {
		case line := <-w.lines:
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				return rest, nil
			}
		case <-c.done:
			return "", c.failure()
		case <-ctx.Done():
			return "", errors.Join(fmt.Errorf("%s did not say it was listening", c.name), ctx.Err())
		}
	}
}
