package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/bench"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/peerhub/peerhubtest"
	"github.com/hubprobe/hubprobe/scenarios"
)

const benchExamples = "../../bench/testdata/"

// benchCopy writes a benchmark example with some config: values changed
// (and added when the file leaves them to their defaults).
func benchCopy(t *testing.T, name string, set map[string]string) string {
	t.Helper()
	data, err := os.ReadFile(benchExamples + name)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.Split(string(data), "\n") {
		key, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		if _, ok := set[key]; !ok || !strings.HasPrefix(line, "  ") {
			kept = append(kept, line)
		}
	}
	text := strings.Join(kept, "\n")
	for key, value := range set {
		text = strings.Replace(text, "config:\n", "config:\n  "+key+": "+value+"\n", 1)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// small scales an example to 10 connections, 5 more senders a step and
// 1 s steps.
func small(target, value string) map[string]string {
	return map[string]string{"connections": "10", "baseSending": "5", "step": "5", "singleStepDuration": "1000", target: value}
}

// `hubprobe bench` exits 0 for a ramp that held, prints the benchmark's
// report, and --output json carries the same steps.
func TestBenchRunsAFileAndExitsZero(t *testing.T) {
	file := benchCopy(t, "quickstart-echo.yaml", small("webAppTarget", peerhubtest.Start(t).URL))
	code, out, errOut := runCLI(t, context.Background(), "bench", file)
	if code != exitOK || !strings.Contains(out, " Connections/sendingStep: 10/10 in ") || !strings.Contains(out, " Result: PASS") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, `config.debug: not used`) {
		t.Errorf("no warning for debug: %q", errOut)
	}
	code, out, errOut = runCLI(t, context.Background(), "bench", "--output", "json", file)
	var rep bench.JSONReport
	if err := json.Unmarshal([]byte(out), &rep); code != exitOK || err != nil {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if len(rep.Items) != 2 || rep.Items[0].SendingStep != 5 || rep.Items[1].Message.TotalSend != 10 || !rep.Hubprobe.Passed {
		t.Errorf("JSON report %+v", rep)
	}
}

// A run that loses messages exits 1.
func TestBenchExitsOneOnLoss(t *testing.T) {
	srv := peerhubtest.Start(t)
	srv.DropEcho.Store(true)
	code, out, _ := runCLI(t, context.Background(), "bench", benchCopy(t, "quickstart-echo.yaml", small("webAppTarget", srv.URL)))
	if code != exitFailed || !strings.Contains(out, " Result: FAIL (step 1: 5 of 5 expected deliveries lost)") {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
}

// Bad files exit 2 naming the file, the line and the key.
func TestBenchBadFilesExitTwo(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		mustWrite(t, path, []byte(body))
		return path
	}
	misspelt := write("misspelt.yaml", "mode: simple\nconfig:\n  webAppTarget: http://127.0.0.1:1/signalrbench\n  conections: 10\n")
	malformed := write("malformed.yaml", "mode: simple\nconfig:\n  webAppTarget: http://127.0.0.1:1/signalrbench\n  connections: ten\n")
	broken := write("broken.yaml", "mode: simple\nconfig:\n  connections: 5\n   step: 5\n")
	for _, c := range []struct{ args, want string }{
		{misspelt, misspelt + `:4: config: unknown key "conections"`},
		{malformed, malformed + `:4: config.connections: expected a decimal whole number from 0 to 4294967295, got "ten"`},
		{broken, broken + `:4: mapping values are not allowed in this context`},
		{"--import " + misspelt, misspelt + `:4: config: unknown key "conections"`},
		{benchExamples + "internal-app-server.yaml", benchExamples + "internal-app-server.yaml:3: config.connectionString: echo with only a connectionString needs the benchmark's internal app server"},
		{filepath.Join(dir, "none.yaml"), "none.yaml: cannot read file"},
	} {
		code, _, errOut := runCLI(t, context.Background(), append([]string{"bench"}, strings.Fields(c.args)...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("bench %s: exit %d, stderr %q; want exit 2 with %q", c.args, code, errOut, c.want)
		}
	}
}

// Every documented example imports as a configuration `hubprobe check`
// accepts, with the file's ramp and no secret in it.
func TestBenchImportsRoundTripThroughCheck(t *testing.T) {
	files, err := filepath.Glob(benchExamples + "*.yaml")
	if err != nil || len(files) < 12 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	t.Setenv(bench.ConnectionStringEnv, "Endpoint=https://example.service.signalr.net;AccessKey=example-key;Version=1.0;")
	for _, file := range files {
		if strings.HasSuffix(file, "internal-app-server.yaml") {
			continue // exits 2, pinned above
		}
		code, out, errOut := runCLI(t, context.Background(), "bench", "--import", file)
		if code != exitOK || strings.Contains(out, "AccessKey") {
			t.Errorf("%s: exit %d, output holds the key: %v\n%s", file, code, strings.Contains(out, "AccessKey"), errOut)
			continue
		}
		imported := writeConfig(t, out)
		code, checked, errOut := runCLI(t, context.Background(), "check", "--config.file", imported)
		if code != exitOK || !strings.Contains(checked, "OK, 1 targets, 1 scenarios") {
			t.Errorf("%s: check exit %d: %s%s\n%s", file, code, checked, errOut, out)
			continue
		}
		checkImportedRamp(t, file, imported)
	}
}

func checkImportedRamp(t *testing.T, file, imported string) {
	t.Helper()
	plan, err := bench.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(imported, scenarios.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Scenarios[0]
	if s.Mode != config.ModeCapacitySearch || *s.CapacitySearch != plan.Search || s.Connections != plan.Connections ||
		s.Kind != plan.Kind || s.SendInterval != plan.SendInterval || s.MessageSize != plan.MessageSize {
		t.Errorf("%s imported as %+v (search %+v), want the plan %+v", file, s, *s.CapacitySearch, plan)
	}
}

// The REST examples run against `hubprobe hub` with an access key, as the
// emulated service; with --redirect-negotiate it is also an app server in
// the service's default mode, which the other files reach at webAppTarget.
func TestBenchAgainstTheHubCommand(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	mustWrite(t, keyFile, []byte("bench-key\n"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub, addr := runOnFreePort(t, ctx, "the hub to listen", 10*time.Second,
		[]string{"hub", "--access-key-file", keyFile, "--redirect-negotiate"}, "--listen", hubListens(t))
	defer func() { cancel(); <-hub.done }()
	cs := "Endpoint=http://" + addr + ";AccessKey=bench-key;Version=1.0;"
	file := benchCopy(t, "rest-send-to-group.yaml", small("connectionString", cs))
	code, out, errOut := runCLI(t, context.Background(), "bench", file)
	if code != exitOK || !strings.Contains(out, " Connections/sendingStep: 10/10 in ") || strings.Contains(out+errOut, "bench-key") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	set := small("webAppTarget", "http://"+addr+"/signalrbench")
	set["connectionString"] = cs
	code, out, errOut = runCLI(t, context.Background(), "bench", benchCopy(t, "internal-app-server.yaml", set))
	if code != exitOK || !strings.Contains(out, " Connections/sendingStep: 10/10 in ") || !strings.Contains(errOut, "config.connectionString: not used") {
		t.Fatalf("through the redirect: exit %d\n%s%s", code, out, errOut)
	}
}
