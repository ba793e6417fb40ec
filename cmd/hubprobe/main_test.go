package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const quickEcho = `
global:
  start_jitter: false
targets:
  - name: local
    embedded: true
scenarios:
  - name: echo
    target: local
    kind: echo
    schedule: "@every 1h"
    duration: 1s
    connections: 3
    message_size: 512
    send_interval: 200ms
    loss_timeout: 1s
`

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hubprobe.yml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCLI(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRunPrintsJSONReportAndExitsZeroOnPass(t *testing.T) {
	path := writeConfig(t, quickEcho)
	code, out, errOut := runCLI(t, context.Background(), "run", "--config.file", path, "--scenario", "echo", "--output", "json")
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr: %s; stdout: %s", code, errOut, out)
	}
	var rep struct {
		Sent, Received, Lost int64
		SentBytes            int64 `json:"sent_bytes"`
		ReceivedBytes        int64 `json:"received_bytes"`
		Throttled            map[string]int64
		Latency              map[string]float64 `json:"latency_seconds"`
		Success              bool
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	// 3 senders × 1 s / 200 ms = 15 sends, each echoed once.
	if rep.Sent != 15 || rep.Received != 15 || rep.Lost != 0 || !rep.Success {
		t.Fatalf("report %+v, want 15 sent, 15 received, 0 lost, success", rep)
	}
	if rep.SentBytes < 15*512 || rep.ReceivedBytes < 15*512 || rep.Throttled == nil {
		t.Fatalf("bytes %d/%d, throttled %v: want at least 15×512 each way and a throttled map", rep.SentBytes, rep.ReceivedBytes, rep.Throttled)
	}
	for _, q := range []string{"p50", "p90", "p99", "max"} {
		if v, ok := rep.Latency[q]; !ok || v <= 0 || v > 1 {
			t.Errorf("latency %s = %v, want a value in (0, 1]", q, v)
		}
	}
}

func TestRunExitsOneWhenTheObjectiveIsMissed(t *testing.T) {
	slow := strings.Replace(quickEcho, "embedded: true", "embedded: true\n    embedded_hub:\n      delivery_delay: 1200ms", 1)
	slow = strings.Replace(slow, "loss_timeout: 1s", "loss_timeout: 3s", 1)
	code, out, _ := runCLI(t, context.Background(), "run", "--config.file", writeConfig(t, slow), "--scenario", "echo")
	if code != exitFailed {
		t.Fatalf("exit %d with every message over 1 s, want 1\n%s", code, out)
	}
	if !strings.Contains(out, "more than 1 % of messages took 1 s or more") {
		t.Fatalf("text report does not say why:\n%s", out)
	}
}

func TestBadUsageAndConfigExitTwo(t *testing.T) {
	bad := writeConfig(t, strings.Replace(quickEcho, "connections: 3", "conections: 3", 1))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--config.file", bad, "--scenario", "echo"}, bad + `:13: scenarios[0]: unknown key "conections"`},
		{[]string{"check", "--config.file", bad}, bad + `:13: scenarios[0]: unknown key "conections"`},
		{[]string{"run", "--config.file", writeConfig(t, quickEcho), "--scenario", "nope"}, `no scenario named "nope"`},
		{[]string{"--no-such-flag"}, "unknown long flag"},
		{[]string{"--config.file", bad}, "unknown key"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, context.Background(), c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, code, errOut, c.want)
		}
	}
}

func TestCheckAcceptsTheEmbeddedDefault(t *testing.T) {
	code, out, errOut := runCLI(t, context.Background(), "check")
	if code != exitOK || !strings.Contains(out, "OK, 3 targets, 9 scenarios") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func scrape(t *testing.T, addr string) map[string]*dtoFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// value returns the first sample of a family whose labels include want.
func value(families map[string]*dtoFamily, name string, want map[string]string) (float64, bool) {
	f, ok := families[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		match := true
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestServeProbesReloadsAndShutsDown(t *testing.T) {
	path := writeConfig(t, quickEcho)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	echo := map[string]string{"scenario": "echo", "target": "local"}
	serving, addr := runOnFreePort(t, ctx, "a first successful run", 15*time.Second,
		[]string{"--config.file", path}, "--web.listen-address", func(addr string) bool {
			v, ok := value(scrape(t, addr), "hubprobe_run_success", echo)
			return ok && v == 1
		})
	families := scrape(t, addr)
	if v, _ := value(families, "hubprobe_messages_received_total", echo); v != 15 {
		t.Errorf("messages_received_total = %v after one run, want 15", v)
	}
	if v, _ := value(families, "hubprobe_message_latency_seconds", echo); v != 15 {
		t.Errorf("latency histogram count = %v, want 15", v)
	}
	if v, ok := value(families, "hubprobe_server_load_ratio", map[string]string{"target": "local"}); !ok || v < 0 || v > 1 {
		t.Errorf("server_load_ratio = %v (present %v), want a ratio", v, ok)
	}

	// A bad file is refused, the old config keeps running.
	if err := os.WriteFile(path, []byte("scenarios: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+addr+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("reload of a bad file answered %d, want 500", resp.StatusCode)
	}
	if v, _ := value(scrape(t, addr), "hubprobe_config_last_reload_successful", nil); v != 0 {
		t.Errorf("config_last_reload_successful = %v after a bad reload, want 0", v)
	}
	if v, _ := value(scrape(t, addr), "hubprobe_scenario_info", echo); v != 1 {
		t.Errorf("the running scenario disappeared after a bad reload")
	}

	cancel()
	select {
	case code := <-serving.done:
		if code != exitOK {
			t.Fatalf("serve exited %d on shutdown, want 0; stderr: %s", code, serving.log)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down within 15 s")
	}
}

// Every example config passes `hubprobe check`, with the real registry of
// scenario kinds (the config package alone cannot know them).
func TestEveryExampleConfigPassesCheck(t *testing.T) {
	examples, err := filepath.Glob("../../examples/*.yml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples found (err %v)", err)
	}
	t.Setenv("HUBPROBE_WESTEU_TOKEN", "example-token")
	t.Setenv("HUBPROBE_SIGNALR_CONNECTION_STRING", "Endpoint=https://example.service.signalr.net;AccessKey=example-key;Version=1.0;")
	t.Setenv("HUBPROBE_WEBPUBSUB_CONNECTION_STRING", "Endpoint=https://example.webpubsub.azure.com;AccessKey=example-key;Version=1.0;")
	for _, path := range examples {
		if strings.HasSuffix(path, ".workload.yml") {
			continue // planner workloads, checked by the plan tests
		}
		code, out, errOut := runCLI(t, context.Background(), "check", "--config.file", path)
		if code != exitOK || !strings.Contains(out, "OK") {
			t.Errorf("%s: exit %d, %s%s", path, code, out, errOut)
		}
	}
}
