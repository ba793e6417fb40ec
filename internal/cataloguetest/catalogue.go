// Package cataloguetest reads hubprobe's metric catalogue from docs/metrics.md,
// the one document that names every metric, so that the exporter, the hub,
// the rules and the dashboards are all checked against the same list.
package cataloguetest

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Row is one metric as documented.
type Row struct {
	Name   string
	Type   string   // counter, gauge, histogram or summary
	Labels []string // sorted
	// Section is the heading the row stands under, e.g. "Catalogue" or
	// "Registered by the embedded hub".
	Section string
}

var backticked = regexp.MustCompile("`([^`]+)`")

// Read parses every metric table row of the document at path.
func Read(path string) (map[string]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows := map[string]Row{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			section = strings.TrimSpace(strings.TrimLeft(line, "#"))
			continue
		}
		row, ok := parseRow(line)
		if !ok {
			continue
		}
		if _, dup := rows[row.Name]; dup {
			return nil, fmt.Errorf("%s: %s documented twice", path, row.Name)
		}
		row.Section = section
		rows[row.Name] = row
	}
	return rows, sc.Err()
}

func parseRow(line string) (Row, bool) {
	cells := strings.Split(line, "|")
	if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`hubprobe_") {
		return Row{}, false
	}
	row := Row{Name: strings.Trim(strings.TrimSpace(cells[1]), "`"), Type: strings.TrimSpace(cells[2])}
	for _, m := range backticked.FindAllStringSubmatch(cells[3], -1) {
		row.Labels = append(row.Labels, m[1])
	}
	sort.Strings(row.Labels)
	return row, true
}

// Series reports whether name is a series of a documented metric: the
// metric itself, or a histogram's or summary's _bucket, _count or _sum.
func Series(rows map[string]Row, name string) bool {
	if _, ok := rows[name]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		if r, ok := rows[base]; ok && (r.Type == "histogram" || r.Type == "summary" && suffix != "_bucket") {
			return true
		}
	}
	return false
}

// HistogramOf returns the documented histogram a series name belongs to,
// and whether it is the native form (the bare name) rather than one of the
// classic series (_bucket, _count, _sum).
func HistogramOf(rows map[string]Row, name string) (histogram string, native, ok bool) {
	if rows[name].Type == "histogram" {
		return name, true, true
	}
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if base, cut := strings.CutSuffix(name, suffix); cut && rows[base].Type == "histogram" {
			return base, false, true
		}
	}
	return "", false, false
}

// Histograms returns the names of the documented histograms, sorted.
func Histograms(rows map[string]Row) []string {
	var out []string
	for name, r := range rows {
		if r.Type == "histogram" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// OneFormOnly returns the documented histograms that one expression, whose
// metric names are names, reads in one form only: natively without the
// classic series, or the other way round. Such an expression is empty
// whenever Prometheus stores only the other form. The result is sorted.
func OneFormOnly(rows map[string]Row, names []string) []string {
	forms := map[string]map[bool]bool{}
	for _, name := range names {
		if h, native, ok := HistogramOf(rows, name); ok {
			if forms[h] == nil {
				forms[h] = map[bool]bool{}
			}
			forms[h][native] = true
		}
	}
	var out []string
	for h, read := range forms {
		if len(read) == 1 {
			out = append(out, h)
		}
	}
	sort.Strings(out)
	return out
}

// InSection returns the rows documented under one heading.
func InSection(rows map[string]Row, section string) map[string]Row {
	out := map[string]Row{}
	for name, r := range rows {
		if r.Section == section {
			out[name] = r
		}
	}
	return out
}

// Compare holds gathered metric families to the documented rows: the same
// names, types and label names, both ways. ignoreLabels are labels a caller
// adds on top of what it documents (such as le, implied by histograms).
// It returns one line per problem.
func Compare(documented map[string]Row, families []*dto.MetricFamily, ignoreLabels ...string) []string {
	var problems []string
	registered := map[string]bool{}
	for _, mf := range families {
		name := mf.GetName()
		registered[name] = true
		row, ok := documented[name]
		if !ok {
			problems = append(problems, name+" is registered but not documented")
			continue
		}
		if want := strings.ToLower(mf.GetType().String()); row.Type != want {
			problems = append(problems, fmt.Sprintf("%s documented as %q, registered as %q", name, row.Type, want))
		}
		if got := labelNames(mf, ignoreLabels); strings.Join(got, ",") != strings.Join(row.Labels, ",") {
			problems = append(problems, fmt.Sprintf("%s documented with labels %v, registered with %v", name, row.Labels, got))
		}
	}
	for name := range documented {
		if !registered[name] {
			problems = append(problems, name+" is documented but not registered")
		}
	}
	sort.Strings(problems)
	return problems
}

func labelNames(mf *dto.MetricFamily, ignore []string) []string {
	seen := map[string]bool{}
	for _, metric := range mf.GetMetric() {
		for _, l := range metric.GetLabel() {
			if !slices.Contains(ignore, l.GetName()) {
				seen[l.GetName()] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
