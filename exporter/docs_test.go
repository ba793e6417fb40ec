package exporter

import (
	"bufio"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

const catalogueDoc = "../docs/metrics.md"

// externalSection heads the table of metrics that other packages register.
const externalSection = "### Registered by the configuration loader"

type docRow struct {
	typ    string
	labels []string
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readCatalogue parses the tables of docs/metrics.md into the exporter's
// rows and the rows of metrics registered elsewhere.
func readCatalogue(t *testing.T) (own, external map[string]docRow) {
	t.Helper()
	f, err := os.Open(catalogueDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	own, external = map[string]docRow{}, map[string]docRow{}
	into := own
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			into = own
			if line == externalSection {
				into = external
			}
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`hubprobe_") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		if _, dup := own[name]; dup {
			t.Errorf("%s documented twice", name)
		}
		row := docRow{typ: strings.TrimSpace(cells[2])}
		for _, m := range backticked.FindAllStringSubmatch(cells[3], -1) {
			row.labels = append(row.labels, m[1])
		}
		sort.Strings(row.labels)
		into[name] = row
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return own, external
}

// TestCatalogueDocumented keeps docs/metrics.md and NewMetrics in step:
// same names, types and label names, both ways.
func TestCatalogueDocumented(t *testing.T) {
	doc, external := readCatalogue(t)
	if len(doc) == 0 {
		t.Fatalf("no metric rows found in %s", catalogueDoc)
	}
	reg, m := newTestMetrics(t)
	feed(m.Recorder(echoWS))
	m.SetServerLoadSource("hub-a", func() float64 { return 0.3 })
	feedPlanning(t, m)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{}
	for _, mf := range mfs {
		name := mf.GetName()
		registered[name] = true
		row, ok := doc[name]
		if !ok {
			t.Errorf("%s is registered but not documented in %s", name, catalogueDoc)
			continue
		}
		if want := strings.ToLower(mf.GetType().String()); row.typ != want {
			t.Errorf("%s documented as %q, registered as %q", name, row.typ, want)
		}
		if got := labelNames(mf); strings.Join(got, ",") != strings.Join(row.labels, ",") {
			t.Errorf("%s documented with labels %v, registered with %v", name, row.labels, got)
		}
	}
	for name := range doc {
		if !registered[name] {
			t.Errorf("%s is documented but NewMetrics does not register it", name)
		}
	}
	for name := range external {
		if registered[name] {
			t.Errorf("%s is documented as registered elsewhere but NewMetrics registers it", name)
		}
	}
}

// labelNames lists a family's label names; the le of histogram buckets is
// implied and not documented.
func labelNames(mf *dto.MetricFamily) []string {
	seen := map[string]bool{}
	for _, metric := range mf.GetMetric() {
		for _, l := range metric.GetLabel() {
			seen[l.GetName()] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
