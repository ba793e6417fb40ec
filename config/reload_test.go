package config

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestSafeConfigReloadGoodBadGood(t *testing.T) {
	reg := prometheus.NewRegistry()
	sc := NewSafeConfig(reg, testKinds)
	path := filepath.Join(t.TempDir(), "config.yml")
	before := float64(time.Now().Unix())

	writeFile(t, path, minimalBody)
	if err := sc.Reload(path); err != nil {
		t.Fatal(err)
	}
	first := sc.Get()
	assertReloadGauges(t, sc, 1, before)
	if first == nil || first.Scenarios[0].Connections != 10 {
		t.Fatalf("first config: %+v", first)
	}

	// Unchanged file: still a success, and the same *Config.
	if err := sc.Reload(path); err != nil || sc.Get() != first {
		t.Fatalf("unchanged reload: err %v, config replaced: %v", err, sc.Get() != first)
	}
	assertReloadGauges(t, sc, 1, before)

	writeFile(t, path, minimalBody+"    connections: 0\n")
	err := sc.Reload(path)
	if err == nil || !strings.Contains(err.Error(), "scenarios[0].connections: must be between 1 and 100000, got 0") {
		t.Fatalf("bad reload: %v", err)
	}
	if sc.Get() != first {
		t.Error("bad reload replaced the config")
	}
	if got := testutil.ToFloat64(sc.reloadSuccess); got != 0 {
		t.Errorf("hubprobe_config_last_reload_successful = %v after a bad reload, want 0", got)
	}

	writeFile(t, path, minimalBody+"    connections: 7\n")
	if err := sc.Reload(path); err != nil {
		t.Fatal(err)
	}
	assertReloadGauges(t, sc, 1, before)
	if got := sc.Get(); got == first || got.Scenarios[0].Connections != 7 {
		t.Errorf("good reload after bad: connections %d, replaced %v", got.Scenarios[0].Connections, got != first)
	}
}

func assertReloadGauges(t *testing.T, sc *SafeConfig, wantSuccess, notBefore float64) {
	t.Helper()
	if got := testutil.ToFloat64(sc.reloadSuccess); got != wantSuccess {
		t.Errorf("hubprobe_config_last_reload_successful = %v, want %v", got, wantSuccess)
	}
	if got := testutil.ToFloat64(sc.reloadTimestamp); got < notBefore || got > float64(time.Now().Unix()+1) {
		t.Errorf("hubprobe_config_last_reload_success_timestamp_seconds = %v, want between %v and now", got, notBefore)
	}
}

func TestSafeConfigRegistersGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	sc := NewSafeConfig(reg, nil)
	if err := sc.Reload(filepath.Join(t.TempDir(), "missing.yml")); err == nil {
		t.Fatal("reload of a missing file succeeded")
	}
	want := `
# HELP hubprobe_config_last_reload_successful Whether the last configuration reload attempt was successful.
# TYPE hubprobe_config_last_reload_successful gauge
hubprobe_config_last_reload_successful 0
# HELP hubprobe_config_last_reload_success_timestamp_seconds Timestamp of the last successful configuration reload.
# TYPE hubprobe_config_last_reload_success_timestamp_seconds gauge
hubprobe_config_last_reload_success_timestamp_seconds 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if sc.Get() != nil {
		t.Error("a failed first reload left a config")
	}
}

// A rotated token file is picked up even though config.yml is unchanged.
func TestSafeConfigReloadSeesRotatedTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	writeFile(t, path, strings.Replace(minimalBody, "    url:", "    access_token_file: token\n    url:", 1))
	writeFile(t, filepath.Join(dir, "token"), "one")
	sc := NewSafeConfig(prometheus.NewRegistry(), nil)
	if err := sc.Reload(path); err != nil {
		t.Fatal(err)
	}
	first := sc.Get()
	writeFile(t, filepath.Join(dir, "token"), "two")
	if err := sc.Reload(path); err != nil {
		t.Fatal(err)
	}
	if got := sc.Get(); got == first || string(got.Targets[0].AccessToken) != "two" {
		t.Errorf("token after rotation %q, config replaced %v", string(got.Targets[0].AccessToken), got != first)
	}
}

func TestSafeConfigSetThenReload(t *testing.T) {
	sc := NewSafeConfig(nil, testKinds)
	def := Default()
	sc.Set(def)
	if sc.Get() != def {
		t.Fatal("Get does not return what Set stored")
	}
	path := filepath.Join(t.TempDir(), "config.yml")
	writeFile(t, path, minimalBody)
	if err := sc.Reload(path); err != nil {
		t.Fatal(err)
	}
	if got := sc.Get(); got == def || got.Targets[0].Name != "local" {
		t.Errorf("reload after Set kept %+v", got.Targets)
	}
}

// Readers never see a torn config while reloads run (checked with -race).
func TestSafeConfigConcurrentAccess(t *testing.T) {
	sc := NewSafeConfig(nil, testKinds)
	sc.Set(Default())
	path := filepath.Join(t.TempDir(), "config.yml")
	writeFile(t, path, minimalBody)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if c := sc.Get(); c == nil || len(c.Scenarios) == 0 {
					t.Error("reader saw an empty config")
					return
				}
			}
		})
	}
	for range 20 {
		if err := sc.Reload(path); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
}

// Without a file, the embedded default is loaded, checked against the
// kinds, and a later Reload of a file still replaces it.
func TestSafeConfigLoadOrDefault(t *testing.T) {
	sc := NewSafeConfig(nil, testKinds)
	if err := sc.LoadOrDefault(""); err != nil {
		t.Fatal(err)
	}
	if got, want := len(sc.Get().Scenarios), len(Default().Scenarios); got != want || got == 0 {
		t.Fatalf("embedded default: %d scenarios, want %d", got, want)
	}
	if err := NewSafeConfig(nil, Kinds{"echo": {}}).LoadOrDefault(""); err == nil || !strings.Contains(err.Error(), DefaultFilename) {
		t.Fatalf("default against too few kinds: %v, want an error naming %s", err, DefaultFilename)
	}
	path := filepath.Join(t.TempDir(), "config.yml")
	writeFile(t, path, minimalBody)
	if err := sc.LoadOrDefault(path); err != nil || sc.Get().Scenarios[0].Connections != 10 {
		t.Fatalf("file after default: err %v, config %+v", err, sc.Get())
	}
}

func TestConfigScenarioByName(t *testing.T) {
	c := Default()
	s, ok := c.Scenario(c.Scenarios[1].Name)
	if !ok || s != &c.Scenarios[1] {
		t.Fatalf("Scenario(%q) = %p, %v; want the config's own element", c.Scenarios[1].Name, s, ok)
	}
	if s, ok := c.Scenario("nope"); ok || s != nil {
		t.Fatalf("Scenario(nope) = %v, %v", s, ok)
	}
}
