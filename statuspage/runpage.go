package statuspage

import (
	"bytes"
	"net/http"
	"net/url"

	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/runreport"
)

// runPage is one kept run at /runs/{run_id}: the same figures as its row
// on the status page, its error in full and the report `hubprobe run`
// prints. Exemplars of the latency histogram name the run, so a dashboard
// links from a slow bucket to here.
type runPage struct {
	runView
	Report string
}

// runPath is the run's page, relative to the status page.
func runPath(runID string) string { return "runs/" + url.PathEscape(runID) }

func (p *statusPage) serveRun(w http.ResponseWriter, r *http.Request) {
	var res scenarios.Result
	found := false
	if p.opts.History != nil {
		res, found = p.opts.History.Run(r.PathValue("id"))
	}
	if !found {
		http.Error(w, "no such run: hubprobe keeps the last runs and failures only, in memory", http.StatusNotFound)
		return
	}
	var report bytes.Buffer
	if err := runreport.WriteText(&report, res); err != nil {
		http.Error(w, "rendering the run's report failed", http.StatusInternalServerError)
		return
	}
	servePage(w, "run.html", runPage{runView: newRunView(res), Report: report.String()})
}
