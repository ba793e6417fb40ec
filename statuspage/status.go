package statuspage

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios"
)

// pageFiles are the HTML pages: the status page, a run's page, and the
// style both share.
//
//go:embed status.html run.html style.html
var pageFiles embed.FS

var pages = template.Must(template.New("pages").Funcs(template.FuncMap{
	"seconds": formatSeconds,
	"when":    formatTime,
	"drops":   formatDrops,
}).ParseFS(pageFiles, "*.html"))

// servePage renders the page template name with data into a buffer, so a
// template error yields a clean 500 instead of half a page.
func servePage(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "rendering "+name+" failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// statusView is what both the status page and /status.json show.
type statusView struct {
	Version   string         `json:"version"`
	Generated time.Time      `json:"generated"`
	Scenarios []scenarioRow  `json:"scenarios"`
	Capacity  []capacityView `json:"capacity_searches"`
	// ServiceMetrics is the reading of each target's Azure Monitor metrics.
	ServiceMetrics []serviceMetricsView `json:"service_metrics,omitempty"`
	Recent         []runView            `json:"recent_runs"`
	OlderFailures  []runView            `json:"older_failures"`
}

type scenarioRow struct {
	Target   string   `json:"target"`
	Scenario string   `json:"scenario"`
	Kind     string   `json:"kind"`
	Schedule string   `json:"schedule"`
	Mode     string   `json:"mode,omitempty"`
	Profile  string   `json:"profile,omitempty"`
	LastRun  *runView `json:"last_run"`
}

type runView struct {
	RunID string `json:"run_id"`
	// URL is the run's page, relative to the status page.
	URL             string           `json:"url"`
	Target          string           `json:"target"`
	Scenario        string           `json:"scenario"`
	Kind            string           `json:"kind"`
	Start           time.Time        `json:"start"`
	DurationSeconds float64          `json:"duration_seconds"`
	Outcome         string           `json:"outcome"`
	Error           string           `json:"error,omitempty"`
	MetSLO          bool             `json:"met_slo"`
	Connections     int              `json:"connections"`
	Sent            int64            `json:"sent"`
	Received        int64            `json:"received"`
	Expected        int64            `json:"expected"`
	Lost            int64            `json:"lost"`
	SlowMessages    int64            `json:"slow_messages"`
	Throttled       map[string]int64 `json:"throttled,omitempty"`
	// Drops are the run's connections that ended without the probe
	// asking, by reason; Reconnects the held connections back after one.
	Drops             map[string]int64 `json:"drops,omitempty"`
	Reconnects        int64            `json:"reconnects,omitempty"`
	MaxSendLagSeconds float64          `json:"max_send_lag_seconds"`
	// Latency is nil when the run delivered nothing.
	Latency *latencyView `json:"latency_seconds"`
}

type latencyView struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// statusPage serves the pages from what opts give.
type statusPage struct {
	opts Options
}

func (p *statusPage) serveHTML(w http.ResponseWriter, _ *http.Request) {
	servePage(w, "status.html", p.view())
}

func (p *statusPage) serveJSON(w http.ResponseWriter, _ *http.Request) {
	body, err := json.MarshalIndent(p.view(), "", "  ")
	if err != nil {
		http.Error(w, "encoding status failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(body, '\n'))
}

func (p *statusPage) view() statusView {
	v := statusView{Version: p.opts.Version, Generated: time.Now().UTC()}
	if p.opts.Scenarios != nil {
		v.Scenarios = p.scenarioRows(p.opts.Scenarios())
	}
	if p.opts.Capacity != nil {
		v.Capacity = capacityViews(p.opts.Capacity.all())
	}
	if p.opts.ServiceMetrics != nil {
		v.ServiceMetrics = serviceMetricsViews(p.opts.ServiceMetrics())
	}
	if h := p.opts.History; h != nil {
		recent, older := h.snapshot()
		v.Recent = runViews(recent)
		v.OlderFailures = runViews(older)
	}
	return v
}

func (p *statusPage) scenarioRows(list []ScenarioStatus) []scenarioRow {
	rows := make([]scenarioRow, 0, len(list))
	for _, s := range list {
		row := scenarioRow{Target: s.Target, Scenario: s.Name, Kind: s.Kind, Schedule: s.Schedule, Mode: s.Mode, Profile: s.Profile}
		if p.opts.History != nil {
			if r, ok := p.opts.History.Last(s.Target, s.Name); ok {
				rv := newRunView(r)
				row.LastRun = &rv
			}
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Target != rows[j].Target {
			return rows[i].Target < rows[j].Target
		}
		return rows[i].Scenario < rows[j].Scenario
	})
	return rows
}

func runViews(results []scenarios.Result) []runView {
	out := make([]runView, len(results))
	for i, r := range results {
		out[i] = newRunView(r)
	}
	return out
}

func newRunView(r scenarios.Result) runView {
	v := runView{
		RunID: r.RunID, URL: runPath(r.RunID),
		Target: r.Target, Scenario: r.Scenario, Kind: r.Kind,
		Start: r.Start.UTC(), DurationSeconds: r.Duration.Seconds(),
		Outcome: r.Outcome, Error: r.Error, MetSLO: r.MetSLO(),
		Connections: r.Connections, Sent: r.Sent, Received: r.Received,
		Expected: r.Expected, Lost: r.Lost, SlowMessages: r.SlowMessages,
		Throttled: r.Throttled, MaxSendLagSeconds: r.MaxSendLag.Seconds(),
		Drops: r.Drops, Reconnects: r.Reconnects,
	}
	if r.Received > 0 {
		v.Latency = &latencyView{
			P50: r.Latency.P50.Seconds(), P90: r.Latency.P90.Seconds(),
			P99: r.Latency.P99.Seconds(), Max: r.Latency.Max.Seconds(),
		}
	}
	return v
}

// formatDrops says how many connections dropped, and why, in the order
// of clientconn.DropReasons: "2 (server_reconnect 1, transport 1)", or 0.
func formatDrops(drops map[string]int64) string {
	var n int64
	var why []string
	for _, reason := range clientconn.DropReasons {
		if c := drops[reason]; c > 0 {
			n += c
			why = append(why, reason+" "+strconv.FormatInt(c, 10))
		}
	}
	if n == 0 {
		return "0"
	}
	return strconv.FormatInt(n, 10) + " (" + strings.Join(why, ", ") + ")"
}

// formatSeconds keeps microseconds for latencies and milliseconds for run
// durations, which is all either needs.
func formatSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d >= time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}
