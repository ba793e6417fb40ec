package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/internal/cataloguetest"
)

// ingestion is one way a Prometheus stores hubprobe's histograms. hubprobe
// exports each with classic and native buckets; what Prometheus keeps
// depends on its flags and scrape configuration.
type ingestion struct {
	name string
	// native: the native histograms are stored; classic: the _bucket,
	// _count and _sum series are.
	native, classic bool
}

// The three modes, in the order they are started: "both" reads the classic
// series from the "classic" instance (see bothScrapeJobs).
var (
	classicOnly = ingestion{name: "classic", classic: true}
	nativeOnly  = ingestion{name: "native", native: true}
	bothForms   = ingestion{name: "both", native: true, classic: true}
	ingestions  = []ingestion{classicOnly, nativeOnly, bothForms}
)

// nativeHistogramsFlag makes Prometheus 2.x negotiate protobuf and store
// native histograms; it then drops the classic series of every histogram
// that has native buckets.
const nativeHistogramsFlag = "--enable-feature=native-histograms"

// exemplarStorageFlag makes Prometheus 2.x keep the exemplars it scrapes
// (from OpenMetrics, or protobuf with native histograms) and answer
// /api/v1/query_exemplars.
const exemplarStorageFlag = "--enable-feature=exemplar-storage"

// modePrometheus is one Prometheus of the test and how it ingests.
type modePrometheus struct {
	mode ingestion
	prom promAPI
}

// startPrometheuses starts one Prometheus per ingestion mode, each on its
// own loopback port and data directory, all scraping the same hubprobe and
// keeping exemplars.
func startPrometheuses(ctx context.Context, t *testing.T, bin, rulesPath, hubprobeAddr string) []modePrometheus {
	t.Helper()
	var out []modePrometheus
	classicAddr := ""
	for _, mode := range ingestions {
		jobs := scrapeJob("hubprobe", hubprobeAddr)
		flags := []string{exemplarStorageFlag}
		if mode.native {
			flags = append(flags, nativeHistogramsFlag)
		}
		if mode == bothForms {
			jobs = bothScrapeJobs(hubprobeAddr, classicAddr)
		}
		prom := startPrometheus(ctx, t, bin, "prometheus-"+mode.name, prometheusConfig(rulesPath, jobs), flags...)
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
	return scrapeJob("hubprobe", hubprobeAddr) + fmt.Sprintf(`  - job_name: classic-histograms
    honor_labels: true
    metrics_path: /federate
    params:
      'match[]': [%q]
    static_configs:
      - targets: [%q]
`, selector, classicAddr)
}

// scrapeJob scrapes every address under one job, each its own instance.
func scrapeJob(name string, addrs ...string) string {
	quoted := make([]string, len(addrs))
	for i, a := range addrs {
		quoted[i] = strconv.Quote(a)
	}
	return fmt.Sprintf("  - job_name: %s\n    static_configs:\n      - targets: [%s]\n", name, strings.Join(quoted, ", "))
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
