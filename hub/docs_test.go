package hub

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/internal/cataloguetest"
)

// The hub's own metrics are the ones docs/metrics.md lists for it.
func TestMetricsDocumented(t *testing.T) {
	rows, err := cataloguetest.Read("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if _, _, err := newMetrics(reg); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range cataloguetest.Compare(cataloguetest.InSection(rows, "Registered by the embedded hub"), mfs) {
		t.Error(problem)
	}
}
