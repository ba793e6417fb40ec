package exporter

import (
	"testing"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/cataloguetest"
)

const catalogueDoc = "../docs/metrics.md"

// TestCatalogueDocumented keeps docs/metrics.md and NewMetrics in step:
// same names, types and label names, both ways.
func TestCatalogueDocumented(t *testing.T) {
	rows, err := cataloguetest.Read(catalogueDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := cataloguetest.InSection(rows, "Catalogue")
	if len(doc) == 0 {
		t.Fatalf("no metric rows found in %s", catalogueDoc)
	}
	reg, m := newTestMetrics(t)
	feed(m, m.Recorder(echoWS), echoWS)
	m.SetServerLoadSource("hub-a", func() float64 { return 0.3 })
	feedPlanning(t, m)
	publishStep(t, m, 1)
	m.EventAnswered("user", 200)
	m.ApplyObjectives(config.Default().Scenarios)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range cataloguetest.Compare(doc, mfs) {
		t.Errorf("%s (%s)", problem, catalogueDoc)
	}
}
