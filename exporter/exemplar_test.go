package exporter

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// wantExemplar names feed's slowest delivery, the only one with an
// exemplar: 1.2 s, the ninth (sequence 8) of sender 1 in run r1.
var wantExemplar = map[string]string{"run_id": "r1", "sender": "1", "sequence": "8"}

func labelsOf(e *dto.Exemplar) map[string]string {
	out := map[string]string{}
	for _, l := range e.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// A protobuf scrape carries the exemplar on the classic bucket the slowest
// delivery fell in (le 2.5), on no other bucket, and among the native
// histogram's exemplars.
func TestLatencyExemplarInProtobuf(t *testing.T) {
	srv := metricsServer(t)
	h := scenarioMetric(t, scrapeProtobuf(t, srv.URL, "hubprobe_message_latency_seconds"), "echo-ws").GetHistogram()
	for _, b := range h.GetBucket() {
		e := b.GetExemplar()
		switch {
		case b.GetUpperBound() == 2.5 && (e == nil || !maps.Equal(labelsOf(e), wantExemplar) || e.GetValue() != 1.2):
			t.Errorf("bucket le=2.5 exemplar %v, want %v at 1.2", e, wantExemplar)
		case b.GetUpperBound() != 2.5 && e != nil:
			t.Errorf("bucket le=%g has exemplar %v, want none", b.GetUpperBound(), e)
		}
	}
	native := h.GetExemplars()
	if len(native) != 1 || !maps.Equal(labelsOf(native[0]), wantExemplar) || native[0].GetValue() != 1.2 {
		t.Errorf("native exemplars %v, want the one of %v at 1.2", native, wantExemplar)
	}
}

// OpenMetrics shows the exemplar after its bucket (its labels in any
// order); the plain text format, which has no exemplars, does not.
func TestLatencyExemplarInOpenMetrics(t *testing.T) {
	srv := metricsServer(t)
	const bucket = `hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="2.5"} 9 # {`
	_, openMetrics := do(t, http.MethodGet, srv.URL+"/metrics", http.Header{"Accept": {"application/openmetrics-text; version=1.0.0"}})
	var line string
	for _, l := range strings.Split(openMetrics, "\n") {
		if strings.HasPrefix(l, bucket) {
			line = l
		}
	}
	labels, value, _ := strings.Cut(strings.TrimPrefix(line, bucket), "} ")
	pairs := strings.Split(labels, ",")
	slices.Sort(pairs)
	if want := []string{`run_id="r1"`, `sender="1"`, `sequence="8"`}; !slices.Equal(pairs, want) || !strings.HasPrefix(value, "1.2 ") {
		t.Errorf("OpenMetrics bucket le=2.5 reads %q, want the exemplar %v at 1.2", line, want)
	}
	if _, text := get(t, srv.URL+"/metrics"); strings.Contains(text, "run_id") {
		t.Error("the plain text format shows an exemplar")
	}
}
