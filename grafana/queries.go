package grafana

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
)

// Query is one PromQL expression of a generated dashboard, with Grafana's
// variables replaced so that Prometheus itself can evaluate it.
type Query struct {
	// Dashboard is the dashboard's uid.
	Dashboard string
	// Panel is the panel title, or "$name" for a template variable's query.
	Panel string
	// RefID is the query's refId within its panel ("" for a variable).
	RefID string
	// Expr is the PromQL expression after substitution.
	Expr string
}

// Substitutions made by Queries. Template variables become ".*" because
// every dashboard uses them in regex matchers (=~); Grafana's interval
// variables become fixed durations.
var builtinValues = map[string]string{
	"__rate_interval": "1m",
	"__interval":      "1m",
	"__range":         "1h",
}

// variableRef matches $name, ${name} and ${name:format}.
var variableRef = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)`)

// Substitute replaces Grafana variables in expr the way Queries does.
func Substitute(expr string) string {
	return variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2]
		if v, ok := builtinValues[name]; ok {
			return v
		}
		return ".*"
	})
}

// labelValues matches Grafana's label_values(selector, label) variable query.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)

// Queries returns every query of every generated dashboard, panels and
// template variables alike, with variables substituted (see Substitute).
// A variable's label_values(selector, label) becomes
// `group by (label) (selector)`, the PromQL that yields the same values.
func Queries() ([]Query, error) {
	dashboards, err := DashboardJSON()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(dashboards))
	for name := range dashboards {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []Query
	for _, name := range names {
		qs, err := dashboardQueries(dashboards[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, qs...)
	}
	return out, nil
}

// dashboardJSON is the part of a dashboard's JSON that holds queries.
type dashboardJSON struct {
	UID        string      `json:"uid"`
	Panels     []panelJSON `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panelJSON struct {
	Title   string      `json:"title"`
	Panels  []panelJSON `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

func dashboardQueries(data []byte) ([]Query, error) {
	var d dashboardJSON
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	var out []Query
	for _, v := range d.Templating.List {
		q, ok := v.Query.(string)
		if v.Type != "query" || !ok {
			continue
		}
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			return nil, fmt.Errorf("variable %s: query %q is not label_values(selector, label)", v.Name, q)
		}
		expr := fmt.Sprintf("group by (%s) (%s)", m[2], m[1])
		out = append(out, Query{Dashboard: d.UID, Panel: "$" + v.Name, Expr: Substitute(expr)})
	}
	return append(out, panelQueries(d.UID, d.Panels)...), nil
}

func panelQueries(uid string, panels []panelJSON) []Query {
	var out []Query
	for _, p := range panels {
		for _, t := range p.Targets {
			out = append(out, Query{Dashboard: uid, Panel: p.Title, RefID: t.RefID, Expr: Substitute(t.Expr)})
		}
		out = append(out, panelQueries(uid, p.Panels)...)
	}
	return out
}
