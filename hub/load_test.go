package hub

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestLoadSeesCPUUse(t *testing.T) {
	h, err := New(Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// Burn CPU on this goroutine until the process has used 50 ms of it.
	start := processCPU()
	for processCPU()-start < 50*time.Millisecond {
		for i := 0; i < 1e5; i++ {
			_ = strings.Repeat("x", i%7)
		}
	}
	if load := h.Load(); load <= 0 || load > 1 {
		t.Fatalf("Load() = %v after burning CPU, want a ratio above 0", load)
	}
}

func TestLoadSamplerWindow(t *testing.T) {
	t0 := time.Now()
	s := newLoadSampler(t0)
	for i := 1; i <= 30; i++ {
		s.record(t0.Add(time.Duration(i) * time.Second))
	}
	s.record(t0.Add(30*time.Second + 10*time.Millisecond)) // too soon: ignored
	if n := len(s.samples); n > 12 {
		t.Fatalf("%d samples kept, want at most 12", n)
	}
	if span := t0.Add(30 * time.Second).Sub(s.samples[0].wall); span != loadWindow {
		t.Fatalf("oldest sample is %v old, want %v", span, loadWindow)
	}
}

func TestNewLoadCollector(t *testing.T) {
	h, err := New(Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewLoadCollector(h, prometheus.Labels{"target": "embedded"}))
	if n, err := testutil.GatherAndCount(reg, "hubprobe_server_load_ratio"); err != nil || n != 1 {
		t.Fatalf("count = %d, %v", n, err)
	}
	families, _ := reg.Gather()
	m := families[0].GetMetric()[0]
	if got := m.GetLabel()[0]; got.GetName() != "target" || got.GetValue() != "embedded" {
		t.Fatalf("label = %v", got)
	}
	if v := m.GetGauge().GetValue(); v < 0 || v > 1 {
		t.Fatalf("value = %v, want a ratio", v)
	}
}
