// Package statuspage serves hubprobe's HTML pages and keeps what they
// show: the status page at / (and its data at /status.json), a page per
// recent run at /runs/{run_id}, the plot of each scenario's last capacity
// search, the recent runs and failures (History) and the last capacity
// searches (CapacityLog). The daemon wires it: the exporter feeds the
// history and the capacity log as runs finish, and the daemon's mux serves
// the pages beside /metrics.
package statuspage

import (
	"net/http"

	"github.com/hubprobe/hubprobe/azure/monitor"
	"github.com/hubprobe/hubprobe/config"
)

// Options are what the pages show; every field may be left empty.
type Options struct {
	// History feeds the recent runs, each scenario's last run and the run
	// pages.
	History *History
	// Scenarios lists the configured scenarios.
	Scenarios func() []ScenarioStatus
	// Capacity feeds the capacity searches and their plots.
	Capacity *CapacityLog
	// ServiceMetrics lists how the reading of each target's service
	// metrics from Azure Monitor stands.
	ServiceMetrics func() []monitor.Status
	// Version is the hubprobe version the status page names.
	Version string
}

// ScenarioStatus describes a configured scenario for the status page.
type ScenarioStatus struct {
	Name     string
	Target   string
	Kind     string
	Schedule string
	// Profile says what the scenario's tier profile resolved to; empty
	// without one.
	Profile string
	// Mode is "run" or "capacity_search".
	Mode string
}

// ScenarioStatuses lists configured scenarios for the status page.
func ScenarioStatuses(list []config.Scenario) []ScenarioStatus {
	out := make([]ScenarioStatus, 0, len(list))
	for _, s := range list {
		schedule := s.Schedule
		if s.Held != nil {
			schedule = "held, reported every " + s.Held.ReportInterval.String()
		}
		out = append(out, ScenarioStatus{
			Name: s.Name, Target: s.Target, Kind: s.Kind, Schedule: schedule, Profile: s.ProfileSummary(), Mode: s.Mode,
		})
	}
	return out
}

// Routes are the pages by mux pattern: / (the status page), /status.json,
// /runs/{id} (a kept run's page) and each capacity search's plot.
func Routes(o Options) map[string]http.Handler {
	p := &statusPage{opts: o}
	return map[string]http.Handler{
		"GET /{$}":         http.HandlerFunc(p.serveHTML),
		"GET /status.json": http.HandlerFunc(p.serveJSON),
		"GET /runs/{id}":   http.HandlerFunc(p.serveRun),
		"GET /capacity/{target}/{scenario}/plot.svg": http.HandlerFunc(p.servePlot),
	}
}
