package monitor_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/azure/monitortest"
	"github.com/hubprobe/hubprobe/internal/cataloguetest"
)

// docs/metrics.md lists exactly the reader's metrics, with their types and
// labels, in its own section, and promlint finds nothing to say of them.
func TestMetricsDocumented(t *testing.T) {
	rows, err := cataloguetest.Read("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	g := newRig(t, monitortest.SignalR)
	serveSignalRUsage(g)
	g.start(t, nil)
	g.waitReads(t, 1, 10*time.Second)
	mfs, err := g.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range cataloguetest.Compare(cataloguetest.InSection(rows, "Registered by the Azure Monitor reader"), mfs) {
		t.Error(problem)
	}
	problems, err := testutil.GatherAndLint(g.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}
