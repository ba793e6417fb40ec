package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for loadbench: the benchmark
// starts the floor's halves as subcommands of its own executable.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "floor-server" || os.Args[1] == "floor-client" || os.Args[1] == "thirdparty-server") {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func testOptions(t *testing.T, window time.Duration) options {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return options{
		n: 20, window: window, runs: 1, interval: time.Second, size: 2048,
		concurrency: 5, lossTimeout: 5 * time.Second, self: []string{self}, progress: io.Discard,
	}
}

func TestQuickBenchMeasuresEveryPairAndStopsThem(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := testOptions(t, 2*time.Second)
	o.webPubSub = true
	res, err := runBench(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.runs) != 3 || res.runs[0].pair != pairFloor || res.runs[1].pair != pairHubprobe || res.runs[2].pair != pairWebPubSub {
		t.Fatalf("want one floor, one hubprobe and one Web PubSub run, got %d runs", len(res.runs))
	}
	for _, m := range res.runs {
		r := m.report
		if r.Connections != 20 || r.Sent != 40 || r.Received != 40 || r.Lost != 0 {
			t.Errorf("%s: connections %d, sent %d, received %d, lost %d; want 20, 40, 40, 0",
				m.pair, r.Connections, r.Sent, r.Received, r.Lost)
		}
		f := figuresOf(m, o)
		for i, v := range f {
			if figure(i) != lost && figure(i) != otherLoad && figure(i) != maxSendLagMs && !(v > 0) {
				t.Errorf("%s: %s = %v, want > 0", m.pair, figureInfo[i].label, v)
			}
		}
		assertGone(t, m.clientPID, m.serverPID)
	}
	var out bytes.Buffer
	writeReport(&out, res)
	for _, want := range []string{"| client CPU-s / 1,000 round trips (window) | ", "| client voluntary context switches / round trip (window) | ", "| probe CPU ≤ 1.3× floor client | ", "| hub CPU ≤ 2× floor server | ",
		" Web PubSub / hubprobe |", "| 1 | webpubsub | "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// The peer pairs: hubprobe's probe and the official JavaScript client, each
// against the third-party server, side by side with their own ratio and
// verdict (the JavaScript client's packages come from npm ci, as the test
// command installs them).
func TestPeerPairsRunBesideTheThirdPartyServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := testOptions(t, 2*time.Second)
	o.peer = true
	res, err := runBench(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.runs) != 4 || res.runs[2].pair != pairHubprobeThirdParty || res.runs[3].pair != pairJSClient {
		t.Fatalf("want floor, hubprobe, hubprobe-3p and jsclient runs, got %d runs", len(res.runs))
	}
	for _, m := range res.runs[2:] {
		r := m.report
		if r.Connections != 20 || r.Sent != 40 || r.Received != 40 || r.Lost != 0 {
			t.Errorf("%s: connections %d, sent %d, received %d, lost %d; want 20, 40, 40, 0",
				m.pair, r.Connections, r.Sent, r.Received, r.Lost)
		}
		if f := figuresOf(m, o); !(f[clientCPU] > 0) || !(f[clientSwitches] > 0) {
			t.Errorf("%s: client CPU %v, switches %v per round trip; want both > 0", m.pair, f[clientCPU], f[clientSwitches])
		}
		assertGone(t, m.clientPID, m.serverPID)
	}
	var out bytes.Buffer
	writeReport(&out, res)
	for _, want := range []string{" hubprobe / JS client, both + philippseith |", "| 1 | jsclient | ", "| probe CPU ≤ 0.6× the official JS client, both against philippseith | "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCancelledPairKillsBothProcesses(t *testing.T) {
	o := testOptions(t, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel) // as SIGINT does through main's context
	begin := time.Now()
	m, err := runPair(ctx, floorPair(o), o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("runPair = %v, want context.Canceled", err)
	}
	if took := time.Since(begin); took > 10*time.Second {
		t.Errorf("runPair took %s to give up", took)
	}
	if m.clientPID == 0 || m.serverPID == 0 {
		t.Fatalf("processes were not started: client %d, server %d", m.clientPID, m.serverPID)
	}
	assertGone(t, m.clientPID, m.serverPID)
}

func assertGone(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d is still there (kill 0: %v)", pid, err)
		}
	}
}

func TestParseReportReadsBothClients(t *testing.T) {
	floorJSON := `{"connections":2,"sent":4,"received":4,"lost":0,"latency_seconds":{"p50":0.0002,"p90":0.0003,"p99":0.0004,"max":0.001}}`
	hubprobeJSON := `{"target":"t","scenario":"echo","kind":"echo","connections":2,"sent":4,"expected":4,"received":3,"lost":1,
		"latency_seconds":{"p50":0.0003,"p90":0.0004,"p99":0.002,"max":0.003},"max_send_lag_seconds":0.0125,"outcome":"success","success":false}`
	for _, tc := range []struct {
		in        string
		wantRecv  int64
		wantP99   float64
		wantLag   float64
		wantError string
	}{
		{in: floorJSON, wantRecv: 4, wantP99: 0.0004},
		{in: hubprobeJSON, wantRecv: 3, wantP99: 0.002, wantLag: 0.0125},
		{in: `{"connections":2,"received":0,"outcome":"failure","error":"2 of 2 connections failed"}`, wantError: "2 of 2 connections failed"},
		{in: `{"connections":0,"received":0}`, wantError: "no connections or no round trips"},
		{in: `hubprobe: bad configuration`, wantError: "reading the client's report"},
	} {
		r, err := parseReport([]byte(tc.in))
		switch {
		case tc.wantError != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantError) {
				t.Errorf("parseReport(%.30q) = %v, want error containing %q", tc.in, err, tc.wantError)
			}
		case err != nil:
			t.Errorf("parseReport(%.30q): %v", tc.in, err)
		case r.Received != tc.wantRecv || r.Latency.P99 != tc.wantP99 || r.MaxSendLagSecs != tc.wantLag:
			t.Errorf("parseReport(%.30q) = received %d, p99 %v, send lag %v; want %d, %v, %v",
				tc.in, r.Received, r.Latency.P99, r.MaxSendLagSecs, tc.wantRecv, tc.wantP99, tc.wantLag)
		case figuresOf(measurement{report: r}, options{n: 1, window: time.Second})[maxSendLagMs] != tc.wantLag*1000:
			t.Errorf("parseReport(%.30q): the report's worst send lag is not %v ms", tc.in, tc.wantLag*1000)
		}
	}
}

func TestFlagsQuickModeAndValidation(t *testing.T) {
	o, err := parseBenchFlags([]string{"-quick"}, io.Discard)
	if err != nil || o.n != 200 || o.window != 5*time.Second || o.runs != 1 || o.concurrency != 50 {
		t.Errorf("-quick = n %d, window %s, runs %d, concurrency %d, err %v; want 200, 5s, 1, 50, nil",
			o.n, o.window, o.runs, o.concurrency, err)
	}
	o, err = parseBenchFlags([]string{"-quick", "-runs", "2", "-n", "400"}, io.Discard)
	if err != nil || o.n != 400 || o.runs != 2 || o.window != 5*time.Second {
		t.Errorf("-quick -runs 2 -n 400 = n %d, runs %d, window %s, err %v", o.n, o.runs, o.window, err)
	}
	for args, want := range map[string]string{
		"-n 100":          "-connect-concurrency 50 must be at most a quarter of -n 100",
		"-window 0s":      "-window must be between 0 and 50m",
		"-runs 0":         "-runs must be at least 1",
		"-n 1000 -size 8": "-size at least 20",
	} {
		_, err := parseBenchFlags(strings.Fields(args), io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", args, err, want)
		}
	}
	if _, err := parseBenchFlags([]string{"-bogus"}, io.Discard); !errors.Is(err, errUsage) {
		t.Errorf("-bogus: %v, want errUsage", err)
	}
}

func TestVerdictsSayByHowMuch(t *testing.T) {
	var floor, probe, probe3p, js figures
	floor[clientCPU], probe[clientCPU] = 0.2, 0.3 // 1.5×: over 1.3× by 15 %
	floor[serverCPU], probe[serverCPU] = 0.1, 0.15
	probe[clientKiBPeak] = 24
	probe[clientSwitches] = 1.5
	probe3p[clientCPU], js[clientCPU] = 0.15, 0.3 // 0.5×: under 0.6× by 17 %
	got := verdicts(summary{pairFloor: floor, pairHubprobe: probe, pairHubprobeThirdParty: probe3p, pairJSClient: js})
	want := []string{"NOT met (15 % over)", "NOT met (36 % above the range)", "met (25 % under)", "met (25 % under)", "NOT met (50 % over)", "met (17 % under)"}
	if len(got) != len(want) {
		t.Fatalf("%d verdicts, want %d", len(got), len(want))
	}
	for i, v := range got {
		if v.verdict != want[i] {
			t.Errorf("%s: verdict %q, want %q", v.target, v.verdict, want[i])
		}
	}
	if m := median([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median = %v, want 2.5", m)
	}
}
