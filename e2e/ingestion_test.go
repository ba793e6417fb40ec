package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/alerts/promtooltest"
	"github.com/hubprobe/hubprobe/internal/cataloguetest"
)

// ingestion is one way a Prometheus stores hubprobe's histograms. hubprobe
// exports each with classic and native buckets; what Prometheus keeps
// depends on its version, flags and scrape configuration.
type ingestion struct {
	name string
	// v3 runs Prometheus 3, else Debian's 2.x.
	v3 bool
	// native: the native histograms are stored; classic: the _bucket,
	// _count and _sum series are.
	native, classic bool
	// nhcb: Prometheus 3 converts the classic histograms it scrapes into
	// native histograms with custom buckets, and stores those.
	nhcb bool
}

// The modes, in the order they are started: 2.x "both" reads the classic
// series from the 2.x "classic" instance (see bothScrapeJobs). On 3.x each
// mode is a scrape setting, and the fourth converts the classic buckets
// into a native histogram with custom buckets (NHCB).
var (
	classicOnly = ingestion{name: "2.x classic", classic: true}
	nativeOnly  = ingestion{name: "2.x native", native: true}
	bothForms   = ingestion{name: "2.x both", native: true, classic: true}
	classic3    = ingestion{name: "3.x classic", v3: true, classic: true}
	native3     = ingestion{name: "3.x native", v3: true, native: true}
	both3       = ingestion{name: "3.x both", v3: true, native: true, classic: true}
	nhcb3       = ingestion{name: "3.x nhcb", v3: true, native: true, nhcb: true}
	ingestions  = []ingestion{classicOnly, nativeOnly, bothForms, classic3, native3, both3, nhcb3}
)

// nativeHistogramsFlag makes Prometheus 2.x negotiate protobuf and store
// native histograms; it then drops the classic series of every histogram
// that has native buckets.
const nativeHistogramsFlag = "--enable-feature=native-histograms"

// exemplarStorageFlag makes Prometheus (2.x and 3.x alike) keep the
// exemplars it scrapes (from OpenMetrics, or protobuf with native
// histograms) and answer /api/v1/query_exemplars.
const exemplarStorageFlag = "--enable-feature=exemplar-storage"

// scrapeOptions3 are the scrape settings of each 3.x mode, as
// docs/dashboards.md gives them.
func (m ingestion) scrapeOptions3() []string {
	switch {
	case m.nhcb:
		return []string{"convert_classic_histograms_to_nhcb: true"}
	case m.native && m.classic:
		return []string{"scrape_native_histograms: true", "always_scrape_classic_histograms: true"}
	case m.native:
		return []string{"scrape_native_histograms: true"}
	}
	return nil
}

// modePrometheus is one Prometheus of the test and how it ingests.
type modePrometheus struct {
	mode ingestion
	prom promAPI
}

// prometheusBinaries are the two releases the tests run: Debian's 2.x and
// the Prometheus 3 that scripts/test.sh builds.
type prometheusBinaries struct{ v2, v3 string }

func prometheusBins(t *testing.T) prometheusBinaries {
	t.Helper()
	return prometheusBinaries{v2: prometheusBinary(t), v3: filepath.Join(promtooltest.Prometheus3Dir(t), "prometheus")}
}

// startPrometheuses starts one Prometheus per ingestion mode of both
// versions, each on its own loopback port and data directory, all
// scraping the same hubprobe, keeping exemplars and evaluating rulesPath.
func startPrometheuses(ctx context.Context, t *testing.T, bins prometheusBinaries, rulesPath, hubprobeAddr string) []modePrometheus {
	t.Helper()
	var out []modePrometheus
	classicAddr := ""
	for _, mode := range ingestions {
		jobs := scrapeJob("hubprobe", []string{hubprobeAddr})
		flags, bin := []string{exemplarStorageFlag}, bins.v2
		switch {
		case mode.v3:
			jobs, bin = scrapeJob("hubprobe", []string{hubprobeAddr}, mode.scrapeOptions3()...), bins.v3
		case mode == bothForms:
			jobs = bothScrapeJobs(hubprobeAddr, classicAddr)
		}
		if mode.native && !mode.v3 {
			flags = append(flags, nativeHistogramsFlag)
		}
		prom := startPrometheus(ctx, t, bin, "prometheus-"+strings.ReplaceAll(mode.name, " ", "-"), prometheusConfig(rulesPath, jobs), flags...)
		if mode == classicOnly {
			classicAddr = strings.TrimPrefix(prom.base, "http://")
		}
		out = append(out, modePrometheus{mode: mode, prom: prom})
	}
	return out
}

// bothScrapeJobs stores both forms of every histogram under the labels
// hubprobe's own job gives them, as `scrape_classic_histograms: true` does.
// Debian's Prometheus 2.42 predates that setting (it came with 2.45), so the
// classic series come from the classic-only instance through /federate,
// with the job and instance labels it scraped them with.
func bothScrapeJobs(hubprobeAddr, classicAddr string) string {
	var match []string
	for _, h := range documentedHistograms() {
		match = append(match, h+"_bucket", h+"_count", h+"_sum")
	}
	selector := fmt.Sprintf(`{__name__=~%q}`, strings.Join(match, "|"))
	return scrapeJob("hubprobe", []string{hubprobeAddr}) + fmt.Sprintf(`  - job_name: classic-histograms
    honor_labels: true
    metrics_path: /federate
    params:
      'match[]': [%q]
    static_configs:
      - targets: [%q]
`, selector, classicAddr)
}

// scrapeJob scrapes every address under one job, each its own instance,
// with the job's options (one "key: value" each).
func scrapeJob(name string, addrs []string, options ...string) string {
	quoted := make([]string, len(addrs))
	for i, a := range addrs {
		quoted[i] = strconv.Quote(a)
	}
	job := fmt.Sprintf("  - job_name: %s\n", name)
	for _, o := range options {
		job += "    " + o + "\n"
	}
	return job + fmt.Sprintf("    static_configs:\n      - targets: [%s]\n", strings.Join(quoted, ", "))
}

func prometheusConfig(rulesPath, scrapeJobs string) string {
	return fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:
%s`, rulesPath, scrapeJobs)
}

// documentedHistograms lists the histograms of the metric catalogue.
func documentedHistograms() []string {
	rows, err := cataloguetest.Read(filepath.Join("..", "docs", "metrics.md"))
	if err != nil {
		panic(err)
	}
	return cataloguetest.Histograms(rows)
}

// checkStorage makes sure a Prometheus stores exactly the forms its mode
// says, for every histogram, so that a mode cannot silently turn into
// another (a flag renamed, a scrape negotiating another format).
func checkStorage(ctx context.Context, t *testing.T, m modePrometheus) {
	t.Helper()
	for _, h := range documentedHistograms() {
		forms := []struct {
			name, expr string
			want       bool
		}{
			{"native histogram", "histogram_count(" + h + ")", m.mode.native},
			{"classic buckets", h + "_bucket", m.mode.classic},
		}
		for _, f := range forms {
			res, err := m.prom.query(ctx, f.expr)
			if err != nil {
				t.Errorf("%s: %v", f.expr, err)
			} else if got := len(res.Samples) > 0; got != f.want {
				t.Errorf("%s ingestion: %s of %s stored = %v, want %v", m.mode.name, f.name, h, got, f.want)
			}
		}
	}
}

// checkLeNormalised shows that Prometheus 3 stores the classic 1 s bucket
// as le="1.0", never "1" as hubprobe writes it, so that the rules' and
// panels' le=~"1|1.0" is what finds it (they return data, checked apart).
func checkLeNormalised(ctx context.Context, t *testing.T, prom promAPI) {
	t.Helper()
	for le, want := range map[string]bool{"1": false, "1.0": true} {
		expr := fmt.Sprintf(`hubprobe_message_latency_seconds_bucket{le=%q}`, le)
		res, err := prom.query(ctx, expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
		} else if got := len(res.Samples) > 0; got != want {
			t.Errorf("%s stored = %v, want %v: Prometheus 3 normalises le on ingestion", expr, got, want)
		}
	}
}

// promqlBlocks returns the ```promql blocks of a Markdown file of the
// repository, so that the documented queries are run as written.
func promqlBlocks(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), path))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	rest := string(data)
	for {
		_, after, found := strings.Cut(rest, "```promql\n")
		if !found {
			return blocks
		}
		block, tail, closed := strings.Cut(after, "```")
		if !closed {
			t.Fatalf("%s: unterminated promql block", path)
		}
		blocks = append(blocks, strings.TrimSpace(block))
		rest = tail
	}
}
