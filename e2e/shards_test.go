package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/alerts"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/schedule"
)

// The sharded test normally takes about 35 s: the capacity search starts
// about 10 s in and takes about 20 s in lockstep; the other checks run
// meanwhile, and the missing-shard alert is pending within seconds of the
// stop.
const (
	shardBudget = 2 * time.Minute
	shards      = 3
	// aggregateWait is --capacity.prometheus-wait: twice the scrape interval.
	aggregateWait = 2 * time.Second
	// rateLimit is the message rate limit, per second, of the hubs the
	// capacity searches ramp against (see shardedConfig).
	rateLimit    = "16"
	alignLimit   = 30 * time.Second
	totalsLimit  = 90 * time.Second // a quiet moment between runs can take a while on a loaded machine
	searchLimit  = 60 * time.Second
	missingLimit = 20 * time.Second
)

// shardedConfig is what every shard runs: three canaries every 10 s against
// hub, and a capacity search against limited, a hub accepting 16 messages
// per second. The search ramps 1 to 4 echo senders at 10 messages per
// second each for 2 s a step: 10/s and 20/s stay within what the hub's
// token bucket (16/s, a second's worth held) lets through in 2 s; 30/s does
// not, so in step 3 the hub closes the connections whose messages it cannot
// take ("Message count reaches limit."), and the capacity is step 2.
func shardedConfig(hub, limited, rampSchedule string) string {
	canary := func(name, kind string, connections int, extra string) string {
		return fmt.Sprintf(`  - name: %s
    target: hub
    kind: %s
    schedule: "@every 10s"
    duration: 1s
    connections: %d
    message_size: 256
    send_interval: 200ms
    loss_timeout: 1s
%s`, name, kind, connections, extra)
	}
	return fmt.Sprintf(`global:
  start_jitter: true
targets:
  - name: hub
    url: http://%s/signalrbench
  - name: limited
    url: http://%s/signalrbench
scenarios:
%s%s%s  - name: ramp
    target: limited
    kind: echo
    schedule: %q
    timeout: 30s
    connections: 4
    message_size: 256
    send_interval: 100ms
    connect_timeout: 2s
    loss_timeout: 1s
    mode: capacity_search
    capacity_search: {base_sending: 1, step: 1, step_duration: 2s}
`, hub, limited, canary("echo", "echo", 6, ""), canary("broadcast", "broadcast", 6, ""),
		canary("group", "send_to_group", 12, "    group_size: 3\n"), rampSchedule)
}

// perRun is what one run of a canary adds to the shard totals. Six or
// twelve connections split evenly over three shards; each connection sends
// 5 messages a run. The fan-out deliveries follow docs/scale-out.md: each
// shard expects only its own sends on its own connections.
type perRun struct {
	connections, sent, received int64
	// unshardedReceived is what one process with every connection would
	// expect of a run.
	unshardedReceived int64
}

var canaryRuns = map[string]perRun{
	"echo": {connections: 6, sent: 30, received: 30, unshardedReceived: 30},
	// sent_i × connections_i = 10 × 2 on each shard; one process: 30 × 6.
	"broadcast": {connections: 6, sent: 30, received: 3 * 10 * 2, unshardedReceived: 30 * 6},
	// Groups of 3 over shards of 4 connections (0–3, 4–7, 8–11): a send
	// expects its group's members on its own shard. Shard 0: three senders
	// of group 0 (3 each) and one of group 1 (1); shard 1: two of group 1
	// and two of group 2 (2 each); shard 2: one of group 2 (1) and three of
	// group 3 (3 each). One process: 12 senders × 3 members.
	"group": {connections: 12, sent: 60, received: 5 * ((3*3 + 1) + (4 * 2) + (1 + 3*3)), unshardedReceived: 5 * 12 * 3},
}

// shardProcess is one sharded daemon.
type shardProcess struct {
	*process
	addr string
}

// Three sharded daemons behind one real Prometheus that loads the shipped
// rules: every canary starts at the same instants on every shard, the
// recording rules add the shards up to the unsharded totals (the fan-out
// deliveries to the documented formula), a capacity search judged from
// Prometheus stops at the same step on every shard as an unsharded search
// of the same scenario, and stopping a shard makes HubprobeShardMissing
// pending.
func TestShardsBehindOnePrometheus(t *testing.T) {
	promBin := prometheusBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), shardBudget)
	defer cancel()
	root := repoRoot(t)
	start := time.Now()
	bin := buildHubprobe(ctx, t, root)
	hub := startHub(ctx, t, bin, "hub")
	limited, alone := startHub(ctx, t, bin, "limited", "--message-rate-limit", rateLimit), startHub(ctx, t, bin, "alone", "--message-rate-limit", rateLimit)
	schedule, at := soonestSchedule(t, time.Now().Add(8*time.Second))
	t.Logf("capacity search on %q, due at %s", schedule, at.Format(time.TimeOnly))

	cfg := writeFile(t, "shards.yml", shardedConfig(hub, limited, schedule))
	aloneCfg := writeFile(t, "alone.yml", shardedConfig(hub, alone, schedule))
	unsharded := make(chan capacityReport, 1)
	go func() { unsharded <- runSearch(ctx, bin, aloneCfg) }()

	// Prometheus scrapes the shards and the shards read it: it starts first,
	// and learns their addresses from a file once they listen.
	targets := filepath.Join(t.TempDir(), "shards.json")
	writeTargets(t, targets)
	prom := startPrometheus(ctx, t, promBin, "prometheus-shards",
		prometheusConfig(filepath.Join(root, "alerts", "hubprobe-rules.yml"), fileScrapeJob("hubprobe", targets)))
	procs := startShards(ctx, t, bin, cfg, prom.base)
	addrs := make([]string, len(procs))
	for i, p := range procs {
		addrs[i] = p.addr
	}
	writeTargets(t, targets, addrs...)
	t.Logf("hubs, prometheus and %d shards ready after %s", len(procs), since(start))

	checkAlignedStarts(ctx, t, procs)
	t.Logf("canaries aligned after %s", since(start))
	checkShardTotals(ctx, t, prom)
	t.Logf("totals checked after %s", since(start))
	checkShardedSearch(ctx, t, prom, <-unsharded)
	t.Logf("capacity searches compared after %s", since(start))
	checkMissingShard(ctx, t, prom, procs[2])
	t.Logf("missing shard alert pending after %s", since(start))
}

// soonestSchedule picks the "@every Ns" schedule, 30 s ≤ N < 90 s, whose
// first run of the search "ramp" (start offset included) comes soonest
// after earliest, so that the test need not wait a whole period.
func soonestSchedule(t *testing.T, earliest time.Time) (string, time.Time) {
	t.Helper()
	var best string
	var bestAt time.Time
	for n := 30; n < 90; n++ {
		spec := fmt.Sprintf("@every %ds", n)
		at, err := schedule.NextStart(config.Scenario{Name: "ramp", Schedule: spec}, true, earliest)
		if err != nil {
			t.Fatal(err)
		}
		if best == "" || at.Before(bestAt) {
			best, bestAt = spec, at
		}
	}
	return best, bestAt
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startHub runs `hubprobe hub` with args on a free loopback address until
// the test ends, and returns the address.
func startHub(ctx context.Context, t *testing.T, bin, name string, args ...string) string {
	t.Helper()
	p, addr := startOnFreeAddress(ctx, t, func(addr string) *process {
		return startProcess(t, "hub-"+name, bin, append([]string{"hub", "--listen", addr}, args...)...)
	}, "/metrics")
	stopAtCleanup(t, p)
	return addr
}

// stopAtCleanup stops p when the test ends, reporting a process that had to
// be killed or did not exit cleanly.
func stopAtCleanup(t *testing.T, p *process) {
	t.Cleanup(func() {
		exited, err := p.stop(hubprobeStopGrace)
		if !exited || err != nil {
			t.Errorf("%s: exited %v (%v) after SIGTERM, want status 0 within %s", p.name, exited, err, hubprobeStopGrace)
		}
		if t.Failed() {
			t.Logf("%s log (last lines):\n%s", p.name, p.logTail(40))
		}
	})
}

// shardStagger separates the shards' starts by more than the 1 s their runs
// may differ by, so that only runs aligned to the clock start together.
const shardStagger = 1300 * time.Millisecond

// startShards starts the shards, each on a free loopback address, judging
// their capacity searches from the Prometheus at promURL.
func startShards(ctx context.Context, t *testing.T, bin, cfg, promURL string) []*shardProcess {
	t.Helper()
	var out []*shardProcess
	for i := range shards {
		if i > 0 {
			time.Sleep(shardStagger)
		}
		p, addr := startOnFreeAddress(ctx, t, func(addr string) *process {
			return startProcess(t, "shard-"+strconv.Itoa(i), bin, "--config.file", cfg, "--web.listen-address", addr,
				"--shard.index", strconv.Itoa(i), "--shard.count", strconv.Itoa(shards),
				"--capacity.prometheus-url", promURL, "--capacity.prometheus-wait", aggregateWait.String())
		}, "/-/ready")
		stopAtCleanup(t, p)
		out = append(out, &shardProcess{process: p, addr: addr})
	}
	return out
}

// fileScrapeJob scrapes the targets listed in the file at path (see
// writeTargets), read again whenever it changes.
func fileScrapeJob(name, path string) string {
	return fmt.Sprintf("  - job_name: %s\n    file_sd_configs:\n      - files: [%q]\n        refresh_interval: 1s\n", name, path)
}

// writeTargets replaces the file of a fileScrapeJob with addrs, all at
// once, so that Prometheus never reads half a file.
func writeTargets(t *testing.T, path string, addrs ...string) {
	t.Helper()
	data, err := json.Marshal([]map[string][]string{{"targets": append([]string{}, addrs...)}})
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// runStarts reads when the shard's finished runs started, by scenario,
// from /status.json.
func (s *shardProcess) runStarts(ctx context.Context) (map[string][]time.Time, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/status.json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var status struct {
		Recent []struct {
			Scenario string    `json:"scenario"`
			Start    time.Time `json:"start"`
		} `json:"recent_runs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&status); err != nil {
		return nil, err
	}
	starts := map[string][]time.Time{}
	for _, r := range status.Recent {
		starts[r.Scenario] = append(starts[r.Scenario], r.Start)
	}
	return starts, nil
}

// checkAlignedStarts waits until every canary has a finished run on shard 0
// at least 3 s old (all shards have finished it by then), then requires a
// run of the same scenario on every other shard that started within 1 s.
func checkAlignedStarts(ctx context.Context, t *testing.T, procs []*shardProcess) {
	t.Helper()
	var spread time.Duration
	err := eventually(ctx, alignLimit, func(ctx context.Context) error {
		starts := make([]map[string][]time.Time, len(procs))
		for i, p := range procs {
			var err error
			if starts[i], err = p.runStarts(ctx); err != nil {
				return err
			}
		}
		spread = 0
		for name := range canaryRuns {
			ref, ok := latestBefore(starts[0][name], time.Now().Add(-3*time.Second))
			if !ok {
				return fmt.Errorf("%s: no run on shard 0 finished yet", name)
			}
			for i := 1; i < len(procs); i++ {
				d := nearest(starts[i][name], ref)
				if d > time.Second {
					return fmt.Errorf("%s: shard 0 ran at %s, shard %d's nearest run is %s away", name, ref.Format(time.StampMilli), i, d)
				}
				spread = max(spread, d)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("canary runs do not start together on every shard: %v", err)
	}
	t.Logf("every canary's runs start together on all shards: at most %s apart", spread)
}

func latestBefore(ts []time.Time, limit time.Time) (time.Time, bool) {
	var best time.Time
	for _, s := range ts {
		if s.Before(limit) && s.After(best) {
			best = s
		}
	}
	return best, !best.IsZero()
}

// nearest is how far the closest of ts is from ref; an hour when ts is empty.
func nearest(ts []time.Time, ref time.Time) time.Duration {
	d := time.Hour
	for _, s := range ts {
		d = min(d, s.Sub(ref).Abs())
	}
	return d
}

// checkShardTotals takes, for each canary, a moment when none of its
// connections was open on any shard for the last 2 s as its baseline, then
// waits for a later such moment by which every shard ran the same number
// K ≥ 1 of its runs since the baseline, none failed, and requires the
// records over shards to have grown by K runs' totals. Shards started at
// different instants may differ in the runs they made before the baseline;
// after it they run in lockstep. Each canary is judged between its own
// runs: the three together, with the capacity search, leave the hubs idle
// too seldom to wait for (a slow machine may never show such a moment).
func checkShardTotals(ctx context.Context, t *testing.T, prom promAPI) {
	t.Helper()
	base := map[string]float64{}
	done := map[string]bool{}
	err := eventually(ctx, totalsLimit, func(ctx context.Context) error {
		var problems []error
		for name, want := range canaryRuns {
			if done[name] {
				continue
			}
			err := canaryTotalsGrew(ctx, prom, name, want, base)
			done[name] = err == nil
			if err != nil {
				problems = append(problems, fmt.Errorf("%s: %w", name, err))
			}
		}
		return errors.Join(problems...)
	})
	if err != nil {
		t.Fatalf("the recording rules do not add the shards up: %v", err)
	}
	for name, want := range canaryRuns {
		t.Logf("%s: a run over %d shards adds up to %d connections, %d sent, %d received (one process: %d received)",
			name, shards, want.connections, want.sent, want.received, want.unshardedReceived)
	}
}

// canaryTotalsGrew takes the canary's baseline into base at its first quiet
// moment, and checks its growth at a later one.
func canaryTotalsGrew(ctx context.Context, prom promAPI, name string, want perRun, base map[string]float64) error {
	at, err := quietAt(ctx, prom, name)
	if err != nil {
		return err
	}
	if _, ok := base[name]; !ok {
		base[name] = at
		return errors.New("baseline taken; waiting for runs after it")
	}
	return shardTotalsGrew(ctx, prom, name, want, base[name])
}

// quietAt is Prometheus's time now, when no connection of the scenario was
// open on any shard for the last 2 s (so its counters and records are
// whole).
func quietAt(ctx context.Context, prom promAPI, scenario string) (float64, error) {
	busy, err := scalar(ctx, prom, `sum(max_over_time(hubprobe_connections_active{scenario=%q}[2s]))`, scenario)
	if err != nil || busy != 0 {
		return 0, fmt.Errorf("a run is in progress (%g connections, %v)", busy, err)
	}
	return scalar(ctx, prom, `vector(time())`)
}

// shardTotalsGrew checks one canary's growth since base (a Unix time).
func shardTotalsGrew(ctx context.Context, prom promAPI, name string, want perRun, base float64) error {
	since := func(sel string) string { return fmt.Sprintf("(%s - %s @ %.3f)", sel, sel, base) }
	runsSel := fmt.Sprintf(`hubprobe_runs_total{result="success",scenario=%q}`, name)
	runs, err := scalar(ctx, prom, "min%s", since(runsSel))
	if err != nil {
		return err
	}
	if runs < 1 {
		return errors.New("no run on some shard since the baseline yet")
	}
	record := func(metric string) string {
		return since(alerts.ShardTotalRecord(metric) + fmt.Sprintf(`{scenario=%q}`, name))
	}
	checks := []struct {
		expr string
		want float64
	}{
		{"max" + since(runsSel), runs},
		{fmt.Sprintf(`count(%s)`, runsSel), shards},
		{fmt.Sprintf(`sum(hubprobe_runs_total{result!="success",scenario=%q})`, name), 0},
		{alerts.ShardTotalRecord("hubprobe_run_connections") + fmt.Sprintf(`{scenario=%q}`, name), float64(want.connections)},
		{record("hubprobe_messages_sent_total"), runs * float64(want.sent)},
		{record("hubprobe_messages_received_total"), runs * float64(want.received)},
		{alerts.ShardTotalRecord("hubprobe_messages_lost_total") + fmt.Sprintf(`{scenario=%q}`, name), 0},
	}
	for _, c := range checks {
		got, err := scalar(ctx, prom, "%s", c.expr)
		if err != nil || got != c.want {
			return fmt.Errorf("after %g runs since the baseline: %s = %g (%v), want %g", runs, c.expr, got, err, c.want)
		}
	}
	return nil
}

// scalar evaluates an expression that yields one sample.
func scalar(ctx context.Context, prom promAPI, format string, args ...any) (float64, error) {
	expr := fmt.Sprintf(format, args...)
	res, err := prom.query(ctx, expr)
	if err != nil {
		return math.NaN(), err
	}
	if len(res.Samples) != 1 {
		return math.NaN(), fmt.Errorf("%s: %d samples", expr, len(res.Samples))
	}
	return strconv.ParseFloat(res.Samples[0].value(), 64)
}

// capacityReport is the part of `hubprobe run --output json` of a capacity
// search the test reads.
type capacityReport struct {
	StopReason string `json:"stop_reason"`
	Capacity   *struct {
		Step    int `json:"step"`
		Sending int `json:"sending_connections"`
	} `json:"capacity"`
	Steps []json.RawMessage `json:"steps"`
	err   error
}

// runSearch runs the search "ramp" once, unsharded, with `hubprobe run`.
func runSearch(ctx context.Context, bin, cfg string) capacityReport {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "run", "--config.file", cfg, "--scenario", "ramp", "--output", "json")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	var rep capacityReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		rep.err = fmt.Errorf("unsharded search: %v (%v); stderr:\n%s", err, runErr, errOut.String())
	}
	return rep
}

// checkShardedSearch waits for every shard to export its search, and
// requires each to have stopped where the unsharded search did, for the
// same reason, with the shards' sending connections at the capacity adding
// up to the unsharded search's.
func checkShardedSearch(ctx context.Context, t *testing.T, prom promAPI, one capacityReport) {
	t.Helper()
	if one.err != nil || one.Capacity == nil {
		t.Fatalf("unsharded search found no capacity: %+v %v", one, one.err)
	}
	if (one.StopReason != "connection_failures" && one.StopReason != "throttled") || one.Capacity.Step != 2 || len(one.Steps) != 3 {
		t.Errorf("unsharded search stopped for %q after %d steps, capacity step %d; want the hub's limit to stop step 3, capacity step 2",
			one.StopReason, len(one.Steps), one.Capacity.Step)
	}
	err := eventually(ctx, searchLimit, func(ctx context.Context) error {
		n, err := scalar(ctx, prom, `count(hubprobe_capacity_steps{scenario="ramp"})`)
		if err != nil || n != shards {
			return fmt.Errorf("%g of %d shards exported a search (%v)", n, shards, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("sharded search: %v\nruns: %s", err, perScenario(ctx, prom, `hubprobe_runs_total{scenario="ramp"} > 0`))
	}
	checks := []struct {
		expr string
		want float64
	}{
		{`min(hubprobe_capacity_steps{scenario="ramp"})`, float64(len(one.Steps))},
		{`max(hubprobe_capacity_steps{scenario="ramp"})`, float64(len(one.Steps))},
		{`count(hubprobe_capacity_stop_reason{scenario="ramp",reason=` + strconv.Quote(one.StopReason) + `} == 1)`, shards},
		{`sum(hubprobe_capacity_senders{scenario="ramp"})`, float64(one.Capacity.Sending)},
		{`sum(hubprobe_runs_total{scenario="ramp",result="success"})`, shards},
	}
	for _, c := range checks {
		if got, err := scalar(ctx, prom, "%s", c.expr); err != nil || got != c.want {
			t.Errorf("sharded search: %s = %g (%v), want %g as unsharded", c.expr, got, err, c.want)
		}
	}
	// Every shard published its last step under the same run id: the one
	// search they judged together.
	res, err := prom.query(ctx, `count by (run, step) (hubprobe_capacity_step{scenario="ramp", figure="shards"})`)
	if err != nil || len(res.Samples) != 1 || res.Samples[0].value() != strconv.Itoa(shards) || res.Samples[0].Metric["step"] != strconv.Itoa(len(one.Steps)) {
		t.Errorf("the shards' last published steps are not one step of one run (%v): %s", err, res.Raw)
	}
	t.Logf("sharded and unsharded searches both stopped at step %d (%s), capacity step %d with %d senders",
		len(one.Steps), one.StopReason, one.Capacity.Step, one.Capacity.Sending)
}

// checkMissingShard stops a shard and waits for HubprobeShardMissing to be
// pending or firing for the job.
func checkMissingShard(ctx context.Context, t *testing.T, prom promAPI, p *shardProcess) {
	t.Helper()
	if exited, err := p.stop(hubprobeStopGrace); !exited || err != nil {
		t.Errorf("%s: exited %v (%v) after SIGTERM, want status 0", p.name, exited, err)
	}
	err := eventually(ctx, missingLimit, func(ctx context.Context) error {
		all, err := prom.alerts(ctx)
		if err != nil {
			return err
		}
		var seen []string
		for _, a := range all {
			if a.Labels["alertname"] == alerts.AlertShardMissing && a.Labels["job"] == "hubprobe" && (a.State == "pending" || a.State == "firing") {
				if a.Value != "2e+00" && a.Value != "2" {
					return fmt.Errorf("%s is %s with value %s, want 2 shards reporting", alerts.AlertShardMissing, a.State, a.Value)
				}
				return nil
			}
			seen = append(seen, a.Labels["alertname"]+"/"+a.State)
		}
		return fmt.Errorf("%s is not active; active alerts: %s", alerts.AlertShardMissing, strings.Join(seen, ", "))
	})
	if err != nil {
		t.Fatal(err)
	}
}
