package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/hubprobe/hubprobe/internal/sleep"
	"github.com/hubprobe/hubprobe/tools/loadbench/floor"
)

// clientReport is the JSON a client prints: the floor client's Report, or
// `hubprobe run --output json`, whose keys are a superset.
type clientReport struct {
	floor.Report
	Outcome string `json:"outcome"`
	Error   string `json:"error"`
}

// measurement is one pair's run.
type measurement struct {
	pair           string
	report         clientReport
	client, server procWindow
	measured       time.Duration // the part of the sending window CPU was read over
	otherCPU       float64       // CPU-s the rest of the machine used in that part
	// lifetime user+sys seconds of each process, from rusage at exit:
	// start-up, connecting, the window, draining and closing.
	clientLifeCPU, serverLifeCPU float64
	clientPID, serverPID         int
}

// windowRoundTrips is how many round trips fall inside the measured part of
// the window. Sends follow an open-loop schedule at a constant rate, so it
// is the run's round trips in proportion to time.
func (m measurement) windowRoundTrips(window time.Duration) float64 {
	return float64(m.report.Received) * m.measured.Seconds() / window.Seconds()
}

// runPair starts the server, then the client, watches both through the
// window and stops whatever is still running, on every path.
func runPair(ctx context.Context, spec pairSpec, o options) (m measurement, err error) {
	ctx, cancel := context.WithTimeout(ctx, o.pairTimeout())
	defer cancel()
	m.pair = spec.name
	srv, url, err := spec.startServer(ctx)
	if err != nil {
		return m, err
	}
	defer srv.stop(5 * time.Second)
	m.serverPID = srv.pid()
	argv, err := spec.clientArgv(url)
	if err != nil {
		return m, err
	}
	if err := sleep.For(ctx, settleTime); err != nil {
		return m, err
	}
	w := &watcher{server: srv, n: o.n, window: o.measuredWindow()}
	if o.perfDir != "" {
		w.onWindow = perfRecorder(o.perfDir, spec.name, o.progress)
	}
	if err := measureClient(ctx, spec.name, argv, w, &m); err != nil {
		return m, err
	}
	srv.stop(5 * time.Second)
	m.serverLifeCPU = srv.cpuAtExit()
	return m, nil
}

// measureClient runs the client against the watched server, which it holds
// while the client starts, and fills in everything but the server's
// lifetime CPU.
func measureClient(ctx context.Context, name string, argv []string, w *watcher, m *measurement) error {
	var err error
	if w.srv.baseRSS, err = rssBytes(w.server.pid()); err != nil {
		return fmt.Errorf("%s: %w", w.server.name, err)
	}
	w.release = hold(w.server)
	defer w.release()
	var out bytes.Buffer
	cli, err := startChild(name+" client", argv, &out)
	if err != nil {
		return err
	}
	defer cli.stop(2 * time.Second)
	m.clientPID, w.client = cli.pid(), cli
	if err := w.run(ctx); err != nil {
		return err
	}
	if err := waitDone(ctx, cli); err != nil {
		return err
	}
	m.client, m.server = w.cli, w.srv
	m.measured, m.otherCPU = w.window, w.otherCPU
	m.clientLifeCPU = cli.cpuAtExit()
	if m.report, err = parseReport(out.Bytes()); err != nil {
		return fmt.Errorf("%w (%w)", err, cli.failure())
	}
	return nil
}

// hold stops a process until the returned function, safe to call more
// than once, lets it continue.
func hold(c *child) (release func()) {
	_ = syscall.Kill(c.pid(), syscall.SIGSTOP)
	return sync.OnceFunc(func() { _ = syscall.Kill(c.pid(), syscall.SIGCONT) })
}

// settleTime lets a freshly started server finish starting before its
// baseline RSS is read.
const settleTime = 300 * time.Millisecond

func waitDone(ctx context.Context, c *child) error {
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s did not finish: %w", c.name, ctx.Err())
	}
}

// parseReport decodes a client's JSON report. `hubprobe run` exits 1 when
// a run misses p99 < 1 s or loses messages, which is still a measurement;
// a run that failed outright is not.
func parseReport(b []byte) (clientReport, error) {
	var r clientReport
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("reading the client's report: %w", err)
	}
	if r.Outcome != "" && r.Outcome != "success" {
		return r, fmt.Errorf("the client's run failed: %s", r.Error)
	}
	if r.Connections <= 0 || r.Received <= 0 {
		return r, errors.New("the client's report shows no connections or no round trips")
	}
	return r, nil
}
