package specs

import (
	"fmt"
	"io"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hubprobe/hubprobe/slo"
)

// sloth's prometheus/v1 spec, the part hubprobe writes.
type slothSpec struct {
	Version string     `yaml:"version"`
	Service string     `yaml:"service"`
	SLOs    []slothSLO `yaml:"slos"`
}

type slothSLO struct {
	Name        string            `yaml:"name"`
	Objective   float64           `yaml:"objective"`
	Description string            `yaml:"description"`
	Labels      map[string]string `yaml:"labels"`
	SLI         struct {
		Events slothEvents `yaml:"events"`
	} `yaml:"sli"`
	Alerting slothAlerting `yaml:"alerting"`
}

type slothEvents struct {
	ErrorQuery string `yaml:"error_query"`
	TotalQuery string `yaml:"total_query"`
}

type slothAlerting struct {
	Name        string     `yaml:"name"`
	PageAlert   slothAlert `yaml:"page_alert"`
	TicketAlert slothAlert `yaml:"ticket_alert"`
}

type slothAlert struct {
	Labels map[string]string `yaml:"labels"`
}

// slothWindow is the template variable sloth puts each window's range in.
const slothWindow = "[{{.window}}]"

// writeSloth writes one sloth spec per window the objectives use: sloth
// takes the window (its SLO period) from the command line, one for every
// spec it reads, so each spec's comment says which.
func writeSloth(w io.Writer, objectives []Objective) error {
	var docs []document
	for _, window := range windowsOf(objectives) {
		spec := slothSpec{Version: "prometheus/v1", Service: Service}
		for _, o := range objectives {
			if o.Window != window {
				continue
			}
			s := slothSLO{Name: o.Name, Objective: o.Ratio * 100, Description: o.Description(),
				Labels: map[string]string{"target": o.Target, "scenario": o.Scenario}}
			s.SLI.Events = slothEvents{
				ErrorQuery: fmt.Sprintf("sum(rate(%s%s))", o.ErrorSelector(), slothWindow),
				TotalQuery: fmt.Sprintf("sum(rate(%s%s))", o.TotalSelector(), slothWindow),
			}
			s.Alerting = slothAlerting{Name: AlertName,
				PageAlert:   slothAlert{Labels: map[string]string{"severity": "page"}},
				TicketAlert: slothAlert{Labels: map[string]string{"severity": "ticket"}}}
			spec.SLOs = append(spec.SLOs, s)
		}
		docs = append(docs, document{
			comment: fmt.Sprintf("hubprobe's objectives over %s: sloth generate --default-slo-period=%s --input <this document>",
				slo.WindowName(window), slo.WindowName(window)),
			value: spec,
		})
	}
	return writeDocuments(w, docs)
}

// windowsOf lists the windows objectives use, shortest first.
func windowsOf(objectives []Objective) []time.Duration {
	var windows []time.Duration
	for _, o := range objectives {
		if !slices.Contains(windows, o.Window) {
			windows = append(windows, o.Window)
		}
	}
	slices.Sort(windows)
	return windows
}

// objectMeta is a Kubernetes object's metadata, as far as it is written.
type objectMeta struct {
	Name   string            `yaml:"name"`
	Labels map[string]string `yaml:"labels"`
}

// pyrraObject is a pyrra.dev/v1alpha1 ServiceLevelObjective with a ratio
// indicator.
type pyrraObject struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       struct {
		Description string `yaml:"description"`
		Target      string `yaml:"target"`
		Window      string `yaml:"window"`
		Indicator   struct {
			Ratio struct {
				Errors pyrraQuery `yaml:"errors"`
				Total  pyrraQuery `yaml:"total"`
			} `yaml:"ratio"`
		} `yaml:"indicator"`
		Alerting struct {
			Name string `yaml:"name"`
		} `yaml:"alerting"`
	} `yaml:"spec"`
}

type pyrraQuery struct {
	Metric string `yaml:"metric"`
}

func pyrraObjects(objectives []Objective) []document {
	docs := make([]document, 0, len(objectives))
	for _, o := range objectives {
		p := pyrraObject{APIVersion: "pyrra.dev/v1alpha1", Kind: "ServiceLevelObjective",
			Metadata: objectMeta{Name: o.Name, Labels: map[string]string{"app.kubernetes.io/name": Service}}}
		p.Spec.Description = o.Description()
		p.Spec.Target = percentNumber(o.Ratio)
		p.Spec.Window = slo.WindowName(o.Window)
		p.Spec.Indicator.Ratio.Errors.Metric = o.ErrorSelector()
		p.Spec.Indicator.Ratio.Total.Metric = o.TotalSelector()
		p.Spec.Alerting.Name = AlertName
		docs = append(docs, document{value: p})
	}
	return docs
}

// openSLO objects of openslo/v1: the service, then one SLO per scenario
// with its ratio indicator inline.
type openSLOObject struct {
	APIVersion string         `yaml:"apiVersion"`
	Kind       string         `yaml:"kind"`
	Metadata   openSLOMeta    `yaml:"metadata"`
	Spec       map[string]any `yaml:"spec"`
}

type openSLOMeta struct {
	Name        string `yaml:"name"`
	DisplayName string `yaml:"displayName,omitempty"`
}

func openSLODocuments(objectives []Objective) []document {
	docs := []document{{value: openSLOObject{APIVersion: "openslo/v1", Kind: "Service",
		Metadata: openSLOMeta{Name: Service},
		Spec:     map[string]any{"description": "Realtime messaging hubs, probed by hubprobe's scheduled scenarios."}}}}
	query := func(selector string) map[string]any {
		return map[string]any{"metricSource": map[string]any{"type": "Prometheus", "spec": map[string]string{"query": selector}}}
	}
	for _, o := range objectives {
		indicator := map[string]any{
			"metadata": openSLOMeta{Name: o.Name + "-deliveries"},
			"spec": map[string]any{"ratioMetric": map[string]any{
				"counter": true, "bad": query(o.ErrorSelector()), "total": query(o.TotalSelector()),
			}},
		}
		docs = append(docs, document{value: openSLOObject{APIVersion: "openslo/v1", Kind: "SLO",
			Metadata: openSLOMeta{Name: o.Name},
			Spec: map[string]any{
				"description": o.Description(), "service": Service, "indicator": indicator,
				"budgetingMethod": "Occurrences",
				"timeWindow":      []map[string]any{{"duration": slo.WindowName(o.Window), "isRolling": true}},
				"objectives":      []map[string]any{{"displayName": "within 1 s", "target": o.Ratio}},
			}}})
	}
	return docs
}

// document is one YAML document and the comment above it.
type document struct {
	comment string
	value   any
}

// writeDocuments writes each document, "---" between them.
func writeDocuments(w io.Writer, docs []document) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	for _, d := range docs {
		var node yaml.Node
		if err := node.Encode(d.value); err != nil {
			return err
		}
		node.HeadComment = d.comment
		if err := enc.Encode(&node); err != nil {
			return err
		}
	}
	return enc.Close()
}
