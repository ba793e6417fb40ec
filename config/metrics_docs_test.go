package config

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/internal/cataloguetest"
)

// The reload gauges are the ones docs/metrics.md lists for the loader.
func TestReloadMetricsDocumented(t *testing.T) {
	rows, err := cataloguetest.Read("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	NewSafeConfig(reg, nil)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range cataloguetest.Compare(cataloguetest.InSection(rows, "Registered by the configuration loader"), mfs) {
		t.Error(problem)
	}
}
