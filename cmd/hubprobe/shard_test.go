package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBadShardSettingsExitTwo(t *testing.T) {
	cfg := writeConfig(t, quickEcho)
	cases := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"run", "--scenario", "echo", "--shard.index=3", "--shard.count=3"},
			"--shard.index/--shard.count: shard index 3 must be at least 0 and below the shard count 3"},
		{nil, []string{"run", "--scenario", "echo", "--shard.count=0"}, "shard count 0 must be at least 1"},
		{nil, []string{"serve", "--shard.index=-1", "--shard.count=2"}, "shard index -1 must be at least 0"},
		{nil, []string{"serve", "--shard.index=one"}, `--shard.index (or HUBPROBE_SHARD_INDEX) "one" is not a whole number`},
		{map[string]string{"HUBPROBE_SHARD_COUNT": "two"}, []string{"serve"}, `--shard.count (or HUBPROBE_SHARD_COUNT) "two" is not a whole number`},
		{map[string]string{"JOB_COMPLETION_INDEX": "5", "HUBPROBE_SHARD_COUNT": "3"}, []string{"run", "--scenario", "echo"},
			"shard index 5 must be at least 0 and below the shard count 3"},
		{map[string]string{"JOB_COMPLETION_INDEX": "x"}, []string{"run", "--scenario", "echo"}, `JOB_COMPLETION_INDEX "x" is not a whole number`},
		{nil, []string{"serve", "--capacity.prometheus-url=ftp://user:secret@prom:9090"}, "--capacity.prometheus-url is not an http or https URL"},
		{nil, []string{"serve", "--capacity.prometheus-wait=0s"}, "--capacity.prometheus-wait 0s must be positive"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			args := append([]string{"--config.file", cfg}, c.args...)
			if c.args[0] == "serve" {
				args = append(args, "--web.listen-address", freePort(t))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			code, _, errOut := runCLI(t, ctx, args...)
			if code != exitUsage || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "secret") {
				t.Errorf("exit %d, stderr %q; want exit 2 saying %q", code, errOut, c.want)
			}
		})
	}
}

// startHub serves `hubprobe hub` from the test binary on a free loopback
// port until the test ends, and returns its address.
func startHub(t *testing.T, args ...string) string {
	t.Helper()
	return startHubEnv(t, nil, args...)
}

// startHubEnv is startHub with env added to the process's environment.
func startHubEnv(t *testing.T, env []string, args ...string) string {
	t.Helper()
	hub, addr := childOnFreePort(t, "the hub", 10*time.Second, env, append([]string{"hub"}, args...), "--listen", hubListens(t))
	t.Cleanup(func() {
		if err := hub.stop(); err != nil {
			t.Errorf("hub on %s: %v", addr, err)
		}
	})
	return addr
}

// shardReport is what one `hubprobe run --output json` process printed.
type shardReport struct {
	runReport
	Connections int
	Duplicated  int64
	Start       time.Time
	code        int
	stdout      string
	stderr      string
}

// runProcesses runs `hubprobe run --scenario NAME` once per set of extra
// arguments, all at once, and returns their reports in order.
func runProcesses(t *testing.T, cfg, scenario string, extra [][]string) []shardReport {
	t.Helper()
	reports := make([]shardReport, len(extra))
	var wg sync.WaitGroup
	for i, args := range extra {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reports[i] = runProcess(cfg, scenario, args)
		}()
	}
	wg.Wait()
	for i, r := range reports {
		if r.code != exitOK || r.Outcome != "success" || r.Lost != 0 || r.Duplicated != 0 {
			t.Errorf("%s %v: exit %d, outcome %q (%s), lost %d, duplicated %d; want exit 0, success, nothing lost\nstderr: %s",
				scenario, extra[i], r.code, r.Outcome, r.Error, r.Lost, r.Duplicated, r.stderr)
		}
	}
	return reports
}

func runProcess(cfg, scenario string, args []string) shardReport {
	return runProcessEnv(cfg, scenario, nil, args)
}

// runProcessEnv is runProcess with env added to the process's environment;
// stdout stays in the report's stdout too, for tests that scan it.
func runProcessEnv(cfg, scenario string, env, args []string) shardReport {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, hubprobeBinaryPath(), append([]string{"run", "--config.file", cfg, "--scenario", scenario, "--output", "json"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := shardReport{stderr: errOut.String()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else if err != nil {
		r.code, r.stderr = -1, err.Error()+"\n"+r.stderr
	}
	if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil {
		r.stderr += "\nstdout is not a JSON report: " + out.String()
	}
	r.stdout = out.String()
	return r
}

// hubprobeBinaryPath is the binary hubprobeBinary built, for goroutines
// that cannot call t.Fatal.
func hubprobeBinaryPath() string { return built.bin }

// shardedKinds are an echo with some senders, a broadcast, and groups of
// 10 over 31 connections: split 11/10/10 over three shards, groups 1 and 2
// span two shards each.
const shardedKinds = `
global:
  start_jitter: false
targets:
  - name: hub
    url: http://HUB/signalrbench
scenarios:
  - name: echo
    target: hub
    kind: echo
    schedule: "@every 3s"
    duration: 1s
    connections: 7
    senders: 5
    message_size: 256
    send_interval: 100ms
    loss_timeout: 1s
  - name: broadcast
    target: hub
    kind: broadcast
    schedule: "@every 3s"
    duration: 1s
    connections: 7
    message_size: 256
    send_interval: 100ms
    loss_timeout: 1s
  - name: group
    target: hub
    kind: send_to_group
    schedule: "@every 3s"
    duration: 1s
    connections: 31
    group_size: 10
    message_size: 256
    send_interval: 100ms
    loss_timeout: 1s
`

// sends is how many messages one sender makes in a run of shardedKinds.
const sends = 10

// shardedTotals are the figures of one scenario, per shard of three and
// unsharded. The fan-out formulas are those of docs/scale-out.md.
type shardedTotals struct {
	connections, sent, expected [3]int64
	unsharded                   struct{ connections, sent, expected int64 }
}

var wantTotals = map[string]shardedTotals{
	// 7 connections: 3, 2, 2; 5 senders: 2, 2, 1. One delivery a send.
	"echo": {
		connections: [3]int64{3, 2, 2}, sent: [3]int64{20, 20, 10}, expected: [3]int64{20, 20, 10},
		unsharded: struct{ connections, sent, expected int64 }{7, 50, 50},
	},
	// Each shard expects its sends on its own connections: sent_i × connections_i.
	"broadcast": {
		connections: [3]int64{3, 2, 2}, sent: [3]int64{30, 20, 20}, expected: [3]int64{30 * 3, 20 * 2, 20 * 2},
		unsharded: struct{ connections, sent, expected int64 }{7, 70, 70 * 7},
	},
	// A send expects the sender's group members on the sender's shard:
	// shard 0 holds 10 of group 0 and 1 of group 1, shard 1 9 of group 1
	// and 1 of group 2, shard 2 9 of group 2 and group 3's one member.
	"group": {
		connections: [3]int64{11, 10, 10}, sent: [3]int64{110, 100, 100},
		expected:  [3]int64{sends * (10*10 + 1*1), sends * (9*9 + 1*1), sends * (9*9 + 1*1)},
		unsharded: struct{ connections, sent, expected int64 }{31, 310, sends * (10*10 + 10*10 + 10*10 + 1*1)},
	},
}

// Three `hubprobe run --shard.index=I --shard.count=3` processes per kind
// against one `hubprobe hub`, next to one unsharded run each against a hub
// of its own: the shards start at the same scheduled instant, their
// connections and sends add up to the unsharded run's (for echo their
// deliveries too), fan-out deliveries follow the documented formula, and
// nothing is lost anywhere.
func TestShardedRunsAddUp(t *testing.T) {
	hubprobeBinary(t)
	sharedHub, ownHub := startHub(t), startHub(t)
	cfgShards := writeConfig(t, strings.ReplaceAll(shardedKinds, "HUB", sharedHub))
	cfgOne := writeConfig(t, strings.ReplaceAll(shardedKinds, "HUB", ownHub))
	// Start every shard early in a 3 s period, so that all wait for the
	// same next instant of the schedule.
	for ms := time.Now().UnixMilli() % 3000; ms < 200 || ms > 1500; ms = time.Now().UnixMilli() % 3000 {
		time.Sleep(50 * time.Millisecond)
	}
	shardArgs := [][]string{{"--shard.index=0", "--shard.count=3"}, {"--shard.index=1", "--shard.count=3"}, {"--shard.index=2", "--shard.count=3"}}
	var wg sync.WaitGroup
	for name, want := range wantTotals {
		wg.Add(1)
		go func() {
			defer wg.Done()
			one := runProcesses(t, cfgOne, name, [][]string{nil})
			shards := runProcesses(t, cfgShards, name, shardArgs)
			checkShardTotals(t, name, want, one[0], shards)
		}()
	}
	wg.Wait()
}

func checkShardTotals(t *testing.T, name string, want shardedTotals, one shardReport, shards []shardReport) {
	u := want.unsharded
	if int64(one.Connections) != u.connections || one.Sent != u.sent || one.Expected != u.expected || one.Received != u.expected {
		t.Errorf("%s unsharded: %d connections, sent %d, expected %d, received %d; want %d, %d, %d, %d",
			name, one.Connections, one.Sent, one.Expected, one.Received, u.connections, u.sent, u.expected, u.expected)
	}
	var conns, sent, expected, received int64
	for i, s := range shards {
		if int64(s.Connections) != want.connections[i] || s.Sent != want.sent[i] || s.Expected != want.expected[i] || s.Received != s.Expected {
			t.Errorf("%s shard %d: %d connections, sent %d, expected %d, received %d; want %d, %d, %d, all received",
				name, i, s.Connections, s.Sent, s.Expected, s.Received, want.connections[i], want.sent[i], want.expected[i])
		}
		if d := s.Start.Sub(shards[0].Start).Abs(); d > time.Second || s.Start.UnixMilli()%3000 > 500 {
			t.Errorf("%s shard %d started at %s, shard 0 at %s: want the same instant of the schedule (a multiple of 3 s)",
				name, i, s.Start.Format(time.StampMilli), shards[0].Start.Format(time.StampMilli))
		}
		conns, sent, expected, received = conns+int64(s.Connections), sent+s.Sent, expected+s.Expected, received+s.Received
	}
	if conns != u.connections || sent != u.sent {
		t.Errorf("%s: shards add up to %d connections and %d sent, unsharded %d and %d", name, conns, sent, one.Connections, one.Sent)
	}
	if name == "echo" && (expected != one.Expected || received != one.Received) {
		t.Errorf("echo: shards add up to %d expected and %d received, unsharded %d and %d", expected, received, one.Expected, one.Received)
	}
	t.Logf("%s: unsharded %d connections, %d sent, %d expected; shards %s", name, one.Connections, one.Sent, one.Expected, shardLine(shards))
}

func shardLine(shards []shardReport) string {
	var parts []string
	for _, s := range shards {
		parts = append(parts, strconv.Itoa(s.Connections)+"/"+strconv.FormatInt(s.Sent, 10)+"/"+strconv.FormatInt(s.Expected, 10))
	}
	return strings.Join(parts, " + ")
}

// A shard whose share of a scenario is no connection at all (3 connections
// over 5 shards) has nothing to run: it says so and exits 0 at once.
func TestShardWithoutConnectionsRunsNothing(t *testing.T) {
	code, out, errOut := runCLI(t, context.Background(), "run", "--config.file", writeConfig(t, quickEcho), "--scenario", "echo",
		"--shard.index=4", "--shard.count=5")
	if code != exitOK || out != "" || !strings.Contains(errOut, `shard 4 of 5 has none of scenario "echo"'s 3 connections: nothing to run`) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 and the reason", code, out, errOut)
	}
}
