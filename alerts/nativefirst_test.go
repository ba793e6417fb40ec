package alerts

import (
	"slices"
	"sort"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hubprobe/hubprobe/internal/cataloguetest"
	"github.com/hubprobe/hubprobe/internal/histogramql/histogramqltest"
)

// Where Prometheus stores both forms of a histogram, the recorded series
// keep the native answer: in every rule the generator renders, the native
// form is the left operand of the `or` that joins it with the classic form.
// This reads the rendered rules file, not the committed one, so that a
// regenerated file cannot flip the order unnoticed; the committed file is
// held to the generator by TestCommittedFilesMatchGenerator.
func TestRenderedRulesKeepTheNativeAnswer(t *testing.T) {
	files, err := Files(DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	var rendered RuleGroups
	if err := yaml.Unmarshal(files[RulesFilePath], &rendered); err != nil {
		t.Fatalf("%s: %v", RulesFilePath, err)
	}
	histograms := cataloguetest.Histograms(documented())
	var joined []string
	for _, g := range rendered.Groups {
		for _, r := range g.Rules {
			if err := histogramqltest.NativeFirst(r.Expr, histograms...); err != nil {
				t.Errorf("%s%s: %v\n%s", r.Record, r.Alert, err, r.Expr)
			}
			if readsAny(r.Expr, histograms) {
				joined = append(joined, r.Record+r.Alert)
			}
		}
	}
	want := []string{
		DefaultConfig.connectFailureShareRecord(), DefaultConfig.latencyP99Record(),
		DefaultConfig.hubTimeP99Record(), DefaultConfig.roundTripP99Record(),
		DefaultConfig.sendLagP99Record(), DefaultConfig.slowShareRecord(),
	}
	sort.Strings(joined)
	sort.Strings(want)
	if !slices.Equal(joined, want) {
		t.Errorf("rules reading a histogram: %q, want %q", joined, want)
	}
}

func readsAny(expr string, histograms []string) bool {
	return slices.ContainsFunc(histograms, func(h string) bool {
		native, classic := histogramqltest.Forms(expr, h)
		return native || classic
	})
}
