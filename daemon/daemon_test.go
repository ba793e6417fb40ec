package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/runreport"
)

// twoScenarios runs against an embedded hub; each run is short, and the
// hour-long schedule leaves the first run the only one.
const twoScenarios = `
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
  - name: fanout
    target: local
    kind: broadcast
    schedule: "@every 1h"
    duration: 1s
    connections: 2
    send_interval: 500ms
    loss_timeout: 1s
`

func writeConfig(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// before is s up to marker, and onward is s from marker on: the parts of
// a config a test keeps. Either fails the test when s lacks marker.
func before(t *testing.T, s, marker string) string {
	t.Helper()
	head, _, found := strings.Cut(s, marker)
	if !found {
		t.Fatalf("no %q in\n%s", marker, s)
	}
	return head
}

func onward(t *testing.T, s, marker string) string {
	t.Helper()
	return s[len(before(t, s, marker)):]
}

func newDaemon(t *testing.T, body string) (*Daemon, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hubprobe.yml")
	writeConfig(t, path, body)
	d, err := New(localtest.Ctx(t, 30*time.Second), Options{Logger: zerolog.Nop(), ConfigFile: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d, path
}

func TestNewRefusesABadFileAsBadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hubprobe.yml")
	writeConfig(t, path, strings.Replace(twoScenarios, "connections: 2", "connections: two", 1))
	before := runtime.NumGoroutine()
	_, err := New(localtest.Ctx(t, 10*time.Second), Options{Logger: zerolog.Nop(), ConfigFile: path})
	if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), path+":22: scenarios[1].connections:") {
		t.Fatalf("New = %v, want ErrBadConfig naming %s:22 and the key", err, path)
	}
	localtest.CheckNoLeak(t, before)
}

// A reload drops the series of a removed scenario; a bad file keeps the
// running configuration and says so on the reload gauge.
func TestReloadForgetsRemovedScenariosAndKeepsTheRunningOneOnABadFile(t *testing.T) {
	d, path := newDaemon(t, twoScenarios)
	assertCount(t, d, "hubprobe_scenario_info", 2)

	writeConfig(t, path, before(t, twoScenarios, "  - name: fanout"))
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	assertCount(t, d, "hubprobe_scenario_info", 1)
	if got := d.statuses(); len(got) != 1 || got[0].Name != "echo" {
		t.Fatalf("status page lists %+v after the reload, want echo alone", got)
	}

	writeConfig(t, path, "scenarios: [\n")
	if err := d.Reload(); err == nil {
		t.Fatal("a bad file reloaded")
	}
	assertCount(t, d, "hubprobe_scenario_info", 1)
	const want = `
# HELP hubprobe_config_last_reload_successful Whether the last configuration reload attempt was successful.
# TYPE hubprobe_config_last_reload_successful gauge
hubprobe_config_last_reload_successful 0
`
	if err := testutil.GatherAndCompare(d.reg, strings.NewReader(want), "hubprobe_config_last_reload_successful"); err != nil {
		t.Error(err)
	}
}

func TestReloadWithoutAFileKeepsTheEmbeddedDefault(t *testing.T) {
	d, err := New(localtest.Ctx(t, 30*time.Second), Options{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	n := len(config.Default().Scenarios)
	if err := d.Reload(); err == nil || !strings.Contains(err.Error(), "embedded default") {
		t.Fatalf("Reload = %v, want an error saying the embedded default runs", err)
	}
	if got := len(d.statuses()); got != n {
		t.Fatalf("%d scenarios after the refused reload, want the default's %d", got, n)
	}
}

// A one-off echo against the embedded hub: 3 connections × 5 sends, every
// message back, the verdict met, the report as JSON.
func TestOnceRunsOneScenarioAndReports(t *testing.T) {
	cfg, err := config.Parse([]byte(twoScenarios), "hubprobe.yml", scenarios.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	ctx := localtest.Ctx(t, 30*time.Second)
	once, err := NewOnce(ctx, cfg, cfg.Scenarios[0], Options{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer once.Close()
	var out bytes.Buffer
	verdict, err := once.Run(ctx, &out, runreport.FormatJSON, "")
	if err != nil || verdict != runreport.VerdictMet {
		t.Fatalf("verdict %d, err %v; report %s", verdict, err, out.String())
	}
	var rep struct{ Sent, Received, Lost int }
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out.String())
	}
	if rep.Sent != 15 || rep.Received != 15 || rep.Lost != 0 {
		t.Errorf("report sent %d, received %d, lost %d; want 15, 15, 0", rep.Sent, rep.Received, rep.Lost)
	}
}

func assertCount(t *testing.T, d *Daemon, name string, want int) {
	t.Helper()
	got, err := testutil.GatherAndCount(d.reg, name)
	if err != nil || got != want {
		t.Fatalf("%s: %d series (err %v), want %d", name, got, err, want)
	}
}
