package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hubprobe/hubprobe/config"
)

// sample is what one read of the daemon's metrics found.
type sample struct {
	at         time.Duration // since the start
	rss        float64       // process_resident_memory_bytes
	goroutines float64
	// drops of the held scenario by reason, lost messages by scenario.
	drops map[string]float64
	lost  map[string]float64
	sent  float64 // the held scenario's
}

// soakConfig is the embedded default, its held scenario moved to a hub of
// its own whose standing drill ends one of them every s.every with a close
// that allows reconnect: the drill's drops are the held connections'
// alone, and the other scenarios' runs are not cut.
func soakConfig(s settings) string {
	cfg := string(config.DefaultYAML)
	cfg = strings.Replace(cfg, "targets:\n", fmt.Sprintf("targets:\n  - name: held\n    embedded: true\n"+
		"    embedded_hub: {drop_every: %s, drop: close_reconnect}\n", s.every), 1)
	cfg = strings.Replace(cfg, "  - name: held\n    target: embedded\n    kind: held\n    connections: 3\n",
		fmt.Sprintf("  - name: held\n    target: held\n    kind: held\n    connections: %d\n", s.connections), 1)
	return cfg
}

// soak runs the daemon on soakConfig for s.duration and samples it.
func soak(ctx context.Context, s settings, stderr io.Writer) ([]sample, error) {
	dir, err := os.MkdirTemp("", "heldsoak")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "hubprobe.yml")
	if err := os.WriteFile(path, []byte(soakConfig(s)), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, s.bin, "--config.file", path, "--web.listen-address", s.listen)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	return sampleFor(ctx, s)
}

// sampleFor reads the metrics every s.sample until s.duration has passed.
func sampleFor(ctx context.Context, s settings) ([]sample, error) {
	start := time.Now()
	var out []sample
	tick := time.NewTicker(s.sample)
	defer tick.Stop()
	for time.Since(start) < s.duration {
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-tick.C:
		}
		sm, err := read("http://" + s.listen + "/metrics")
		if err != nil {
			continue // not listening yet, or a scrape lost: the next one counts
		}
		sm.at = time.Since(start)
		out = append(out, sm)
	}
	return out, nil
}

// read scrapes url once.
func read(url string) (sample, error) {
	resp, err := http.Get(url) //nolint:gosec // the daemon this tool started, on loopback
	if err != nil {
		return sample{}, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return sample{}, err
	}
	sm := sample{drops: map[string]float64{}, lost: map[string]float64{}}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := model.LabelSet{}
			for _, l := range m.GetLabel() {
				labels[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
			}
			sm.add(name, labels, m.GetGauge().GetValue()+m.GetCounter().GetValue())
		}
	}
	return sm, nil
}

func (sm *sample) add(name string, labels model.LabelSet, v float64) {
	switch {
	case name == "process_resident_memory_bytes":
		sm.rss = v
	case name == "go_goroutines":
		sm.goroutines = v
	case name == "hubprobe_connection_drops_total" && labels["scenario"] == "held":
		sm.drops[string(labels["reason"])] += v
	case name == "hubprobe_messages_lost_total":
		sm.lost[string(labels["scenario"])] += v
	case name == "hubprobe_messages_sent_total" && labels["scenario"] == "held":
		sm.sent = v
	}
}
