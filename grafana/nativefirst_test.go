package grafana

import (
	"testing"

	"github.com/hubprobe/hubprobe/internal/cataloguetest"
	"github.com/hubprobe/hubprobe/internal/histogramql/histogramqltest"
)

// Where Prometheus stores both forms of a histogram, every panel shows the
// native answer: in every query of the dashboards the generator renders,
// the native form is the left operand of the `or` that joins it with the
// classic form (for the heatmap, `or on ()`). This reads the generated
// dashboards, not the committed files, so that regenerating them cannot
// flip the order unnoticed.
func TestGeneratedDashboardsKeepTheNativeAnswer(t *testing.T) {
	queries, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	histograms := cataloguetest.Histograms(documented())
	readers := 0
	for _, q := range queries {
		if err := histogramqltest.NativeFirst(q.Expr, histograms...); err != nil {
			t.Errorf("dashboard %s, panel %q, query %s: %v\n%s", q.Dashboard, q.Panel, q.RefID, err, q.Expr)
		}
		for _, h := range histograms {
			if native, classic := histogramqltest.Forms(q.Expr, h); native || classic {
				readers++
				break
			}
		}
	}
	if readers < 15 {
		t.Errorf("only %d generated queries read a histogram; want the latency, connect and send lag panels (15 or more)", readers)
	}
}
