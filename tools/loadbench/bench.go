package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"
)

// options is one benchmark: the workload both pairs run, and how often.
type options struct {
	n           int           // connections per client
	window      time.Duration // measured sending time
	runs        int           // repetitions of each pair
	interval    time.Duration // each connection sends once per interval
	size        int           // message bytes
	concurrency int           // connections opened at once
	lossTimeout time.Duration // wait for late replies after the last send
	hubprobe    string        // a built hubprobe binary; empty builds ./cmd/hubprobe
	self        []string      // argv that runs this program's subcommands
	perfDir     string        // when set, one more run of each pair under perf record
	maxOther    float64       // cores other processes may keep busy before a run is repeated; 0: no limit
	webPubSub   bool          // also run the Web PubSub upstream echo pair
	classic     bool          // also run the classic ASP.NET SignalR WebSocket echo pair
	peer        bool          // also run hubprobe and the JavaScript client against the third-party server
	progress    io.Writer     // one line per finished pair
}

// connectTimeout bounds one connection's dial, upgrade and handshake.
const connectTimeout = 15 * time.Second

// scenarioTimeout bounds a whole `hubprobe run`.
func (o options) scenarioTimeout() time.Duration {
	return o.window + o.lossTimeout + 90*time.Second
}

func (o options) withoutPerf() options {
	o.perfDir = ""
	return o
}

// measuredWindow is the part of the sending window over which CPU is read.
// It starts when the last connection is open and stops short of the end of
// sending, so that it never reaches into the client's draining and exit.
func (o options) measuredWindow() time.Duration {
	return o.window - min(time.Second, o.window/10)
}

// pairTimeout bounds one pair from the server's start to its stop.
func (o options) pairTimeout() time.Duration {
	return o.scenarioTimeout() + 30*time.Second
}

func (o options) validate() error {
	switch {
	case o.n < 1:
		return fmt.Errorf("-n must be at least 1, got %d", o.n)
	case o.window <= 0 || o.window >= 50*time.Minute:
		return fmt.Errorf("-window must be between 0 and 50m, got %s", o.window)
	case o.runs < 1:
		return fmt.Errorf("-runs must be at least 1, got %d", o.runs)
	case o.interval <= 0 || o.size < 20 || o.concurrency < 1 || o.lossTimeout <= 0:
		return fmt.Errorf("-interval, -loss-timeout and -connect-concurrency must be positive and -size at least 20")
	case o.concurrency*4 > o.n:
		// The baseline RSS is read while the first connections wait on the
		// held server; they must be a small part of all of them.
		return fmt.Errorf("-connect-concurrency %d must be at most a quarter of -n %d", o.concurrency, o.n)
	}
	return nil
}

// benchResult is every measurement of one benchmark.
type benchResult struct {
	opts                  options
	pairs                 []string // the pairs' names, in the order each run ran them
	loadBefore, loadAfter string
	runs                  []measurement
	discarded             int // runs repeated because the machine was busy
}

// runBench runs the floor pair and the hubprobe pair (and, asked, the Web
// PubSub pair) in turn, runs times,
// one process at a time apart from the pair being measured.
func runBench(ctx context.Context, o options) (benchResult, error) {
	res := benchResult{opts: o, loadBefore: loadAverage()}
	if err := o.validate(); err != nil {
		return res, err
	}
	if err := ensureFileLimit(o.n + 256); err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return res, err
	}
	defer func() { _ = os.RemoveAll(dir) }() // a temporary directory left behind harms no measurement
	binary := o.hubprobe
	if binary == "" {
		if binary, err = buildHubprobe(ctx, dir); err != nil {
			return res, err
		}
	}
	pairs, err := pairsToRun(ctx, o, binary, dir)
	if err != nil {
		return res, err
	}
	for _, p := range pairs {
		res.pairs = append(res.pairs, p.name)
	}
	for run := 1; run <= o.runs; run++ {
		for _, p := range pairs {
			m, err := runQuiet(ctx, p, o, run, &res)
			if err != nil {
				return res, fmt.Errorf("run %d, %s: %w", run, p.name, err)
			}
			res.runs = append(res.runs, m)
		}
	}
	res.loadAfter = loadAverage()
	if o.perfDir != "" {
		return res, profileRun(ctx, o, pairs)
	}
	return res, nil
}

// pairsToRun is the floor and hubprobe pairs, and those the options add.
func pairsToRun(ctx context.Context, o options, binary, dir string) ([]pairSpec, error) {
	pairs := []pairSpec{floorPair(o), hubprobePair(o, binary, dir)}
	if o.webPubSub {
		pairs = append(pairs, webPubSubPair(o, binary, dir))
	}
	if o.classic {
		pairs = append(pairs, classicPair(o, binary, dir))
	}
	if o.peer {
		script, err := jsPeerScript(ctx)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, hubprobeThirdPartyPair(o, binary, dir), jsPeerPair(o, script))
	}
	return pairs, nil
}

// maxAttempts bounds how often one run is repeated on a busy machine.
const maxAttempts = 4

// runQuiet runs a pair until other processes kept at most o.maxOther cores
// busy during its window, or maxAttempts runs were made; the last is kept
// either way, and the report shows its other load. Waking threads from idle
// is much of the cost at this load, so runs on a busy machine measure less
// CPU per message than runs on a quiet one.
func runQuiet(ctx context.Context, p pairSpec, o options, run int, res *benchResult) (measurement, error) {
	for attempt := 1; ; attempt++ {
		m, err := runPair(ctx, p, o.withoutPerf())
		if err != nil {
			return m, err
		}
		f := figuresOf(m, o)
		fmt.Fprintf(o.progress, "run %d/%d %-8s %s; baseline RSS client %.1f MiB, server %.1f MiB\n",
			run, o.runs, p.name, f.summary(), mib(m.client.baseRSS), mib(m.server.baseRSS))
		if o.maxOther <= 0 || f[otherLoad] <= o.maxOther || attempt == maxAttempts {
			return m, nil
		}
		res.discarded++
		fmt.Fprintf(o.progress, "  other processes kept %.2f cores busy (limit %.2f): running it again\n", f[otherLoad], o.maxOther)
	}
}

// profileRun runs each pair once more with perf recording both processes
// through the window. Its figures are left out of the report: the sampling
// costs CPU of its own.
func profileRun(ctx context.Context, o options, pairs []pairSpec) error {
	if err := os.MkdirAll(o.perfDir, 0o755); err != nil {
		return err
	}
	for _, p := range pairs {
		if _, err := runPair(ctx, p, o); err != nil {
			return fmt.Errorf("profiling run, %s: %w", p.name, err)
		}
	}
	fmt.Fprintf(o.progress, "perf data in %s; read it with: perf report -i FILE --no-children --sort dso,symbol\n", o.perfDir)
	return nil
}

// ensureFileLimit makes sure this process and its children may open need
// files. The Go runtime raises its own soft limit at start-up but hands
// children the original one; setting it explicitly passes it on.
func ensureFileLimit(need int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	if lim.Max < uint64(need) {
		return fmt.Errorf("open-file hard limit %d is below the %d this run needs; lower -n", lim.Max, need)
	}
	lim.Cur = max(lim.Cur, uint64(need))
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// loadAverage is the 1, 5 and 15 minute load average, for judging noise.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
