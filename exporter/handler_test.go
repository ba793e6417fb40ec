package exporter

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

var testClient = &http.Client{Timeout: 5 * time.Second}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	return do(t, http.MethodGet, url, nil)
}

func do(t *testing.T, method, url string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestHealthyAndReady(t *testing.T) {
	var ready atomic.Bool
	srv := httptest.NewServer(NewHandler(HandlerOptions{Ready: ready.Load}))
	defer srv.Close()

	if code, body := get(t, srv.URL+"/-/healthy"); code != 200 || body != "Healthy\n" {
		t.Errorf("/-/healthy: %d %q", code, body)
	}
	if code, _ := get(t, srv.URL+"/-/ready"); code != http.StatusServiceUnavailable {
		t.Errorf("/-/ready before ready: %d, want 503", code)
	}
	ready.Store(true)
	if code, body := get(t, srv.URL+"/-/ready"); code != 200 || body != "Ready\n" {
		t.Errorf("/-/ready after ready: %d %q", code, body)
	}
}

func TestReload(t *testing.T) {
	var calls atomic.Int32
	var fail atomic.Bool
	reload := func() error {
		calls.Add(1)
		if fail.Load() {
			return errors.New(`line 3: unknown field "shedule"`)
		}
		return nil
	}
	srv := httptest.NewServer(NewHandler(HandlerOptions{Reload: reload}))
	defer srv.Close()

	if code, _ := get(t, srv.URL+"/-/reload"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /-/reload: %d, want 405", code)
	}
	if calls.Load() != 0 {
		t.Fatal("GET triggered a reload")
	}
	if code, body := do(t, http.MethodPost, srv.URL+"/-/reload", nil); code != 200 || body != "Reloaded\n" {
		t.Errorf("POST /-/reload: %d %q", code, body)
	}
	fail.Store(true)
	code, body := do(t, http.MethodPost, srv.URL+"/-/reload", nil)
	if code != http.StatusInternalServerError || !strings.Contains(body, `unknown field "shedule"`) {
		t.Errorf("failing reload: %d %q", code, body)
	}
	if calls.Load() != 2 {
		t.Errorf("reload called %d times, want 2", calls.Load())
	}
}

func TestReloadNotConfigured(t *testing.T) {
	srv := httptest.NewServer(NewHandler(HandlerOptions{}))
	defer srv.Close()
	if code, _ := do(t, http.MethodPost, srv.URL+"/-/reload", nil); code != http.StatusNotImplemented {
		t.Errorf("POST /-/reload without Reload: %d, want 501", code)
	}
}

// metricsServer serves the handler over metrics fed with one run.
func metricsServer(t *testing.T) *httptest.Server {
	t.Helper()
	reg, m := newTestMetrics(t)
	feed(m, m.Recorder(echoWS), echoWS)
	srv := httptest.NewServer(NewHandler(HandlerOptions{Gatherer: reg}))
	t.Cleanup(srv.Close)
	return srv
}

func TestMetricsEndpoint(t *testing.T) {
	srv := metricsServer(t)
	code, body := get(t, srv.URL+"/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics: %d", code)
	}
	want := fmt.Sprintf(`hubprobe_message_latency_seconds_bucket{%s,le="1"} 8`, wantLabels)
	if !strings.Contains(body, want) {
		t.Fatalf("/metrics lacks %q", want)
	}
}

// TestMetricsNativeHistogram checks a scraper that negotiates protobuf gets
// the native buckets next to the classic ones.
func TestMetricsNativeHistogram(t *testing.T) {
	srv := metricsServer(t)
	mf := scrapeProtobuf(t, srv.URL, "hubprobe_message_latency_seconds")
	h := scenarioMetric(t, mf, "echo-ws").GetHistogram()
	if h.GetSchema() != 3 || len(h.GetPositiveSpan()) == 0 || len(h.GetBucket()) != len(latencyBuckets) {
		t.Fatalf("schema %d, %d spans, %d classic buckets; want schema 3 (factor 1.1), spans and %d classic buckets",
			h.GetSchema(), len(h.GetPositiveSpan()), len(h.GetBucket()), len(latencyBuckets))
	}
}

// scrapeProtobuf scrapes base's /metrics as a Prometheus that negotiates
// protobuf does, and returns the family called name.
func scrapeProtobuf(t *testing.T, base, name string) *dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited")
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			t.Fatalf("no %s in protobuf scrape: %v", name, err)
		}
		if mf.GetName() == name {
			return &mf
		}
	}
}

func scenarioMetric(t *testing.T, mf *dto.MetricFamily, scenario string) *dto.Metric {
	t.Helper()
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "scenario" && l.GetValue() == scenario {
				return m
			}
		}
	}
	t.Fatalf("%s has no series for scenario %q", mf.GetName(), scenario)
	return nil
}
