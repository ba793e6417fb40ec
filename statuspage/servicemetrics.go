package statuspage

import (
	"sort"
	"time"

	"github.com/hubprobe/hubprobe/azure/monitor"
)

// serviceMetricsView is one row of the page's Azure Monitor table.
type serviceMetricsView struct {
	Target        string    `json:"target"`
	ResourceID    string    `json:"resource_id"`
	LastRead      time.Time `json:"last_read"`
	DataUntil     time.Time `json:"data_until"`
	Failing       bool      `json:"failing"`
	LastFailure   string    `json:"last_failure,omitempty"`
	LastFailureAt time.Time `json:"last_failure_at"`
	Dropped       []string  `json:"dropped_metrics,omitempty"`
}

func serviceMetricsViews(list []monitor.Status) []serviceMetricsView {
	out := make([]serviceMetricsView, 0, len(list))
	for _, s := range list {
		out = append(out, serviceMetricsView(s))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Target < out[j].Target })
	return out
}
