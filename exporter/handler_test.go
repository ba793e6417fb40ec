package exporter

import (
	"encoding/json"
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

	"github.com/hubprobe/hubprobe/scenarios"
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

// statusServer runs a handler over metrics fed with one failed run,
// followed by enough successful runs of another scenario to push that
// failure out of the recent list.
func statusServer(t *testing.T, limit, successes int) (*httptest.Server, *History) {
	t.Helper()
	h := NewHistory(limit)
	reg, m := newTestMetrics(t, WithHistory(h))
	feed(m, m.Recorder(echoWS), echoWS)
	m.Recorder(ScenarioInfo{Target: "hub-a", Scenario: "broadcast", Kind: "broadcast"})
	for i := range successes {
		m.RunFinished(scenarios.Result{
			Target: "hub-a", Scenario: "broadcast", Outcome: scenarios.ResultSuccess, Start: runStart.Add(time.Duration(i+1) * time.Minute),
			Received: 5, Latency: scenarios.Quantiles{P99: 40 * time.Millisecond},
		})
	}
	srv := httptest.NewServer(NewHandler(HandlerOptions{
		Gatherer: reg, History: h, Version: "1.2.3",
		Scenarios: func() []ScenarioStatus {
			return []ScenarioStatus{
				{Name: "echo-ws", Target: "hub-a", Kind: "echo", Schedule: "@every 1m"},
				{Name: "broadcast", Target: "hub-a", Kind: "broadcast", Schedule: "*/5 * * * *"},
				{Name: "stream", Target: "hub-b", Kind: "streaming", Schedule: "@every 10m"},
			}
		},
	}))
	t.Cleanup(srv.Close)
	return srv, h
}

func TestStatusPageShowsEscapedError(t *testing.T) {
	srv, _ := statusServer(t, 100, 2)
	code, body := get(t, srv.URL+"/")
	if code != 200 {
		t.Fatalf("GET /: %d", code)
	}
	errText := failedRun().Error
	if !strings.Contains(body, templateEscaped(errText)) {
		t.Fatalf("status page lacks the escaped error %q:\n%s", templateEscaped(errText), body)
	}
	if strings.Contains(body, errText) {
		t.Fatal("status page contains the raw, unescaped error text")
	}
	for _, want := range []string{"hub-a", "echo-ws", "@every 1m", "*/5 * * * *", "not run yet", "1.2s", "failure", "1.2.3"} {
		if !strings.Contains(body, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	if code, _ := get(t, srv.URL+"/nope"); code != http.StatusNotFound {
		t.Errorf("GET /nope: %d, want 404", code)
	}
}

// templateEscaped is how html/template writes text content: it escapes
// quotes as numeric references.
func templateEscaped(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}

func TestStatusKeepsFailureAfterRecentListMovesOn(t *testing.T) {
	srv, h := statusServer(t, 3, 10)
	if got := len(h.Recent()); got != 3 {
		t.Fatalf("%d recent runs, want 3", got)
	}
	_, body := get(t, srv.URL+"/")
	if !strings.Contains(body, "Earlier failures") || !strings.Contains(body, templateEscaped(failedRun().Error)) {
		t.Fatalf("pushed-out failure not shown:\n%s", body)
	}

	code, raw := get(t, srv.URL+"/status.json")
	if code != 200 {
		t.Fatalf("GET /status.json: %d", code)
	}
	var st statusView
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Recent) != 3 || len(st.OlderFailures) != 1 || len(st.Scenarios) != 3 {
		t.Fatalf("status.json: %d recent, %d older failures, %d scenarios; want 3, 1, 3",
			len(st.Recent), len(st.OlderFailures), len(st.Scenarios))
	}
	f := st.OlderFailures[0]
	if f.Error != failedRun().Error || f.Lost != 1 || f.Latency == nil || f.Latency.P99 != 1.2 {
		t.Fatalf("older failure = %+v", f)
	}
	echo := st.Scenarios[1] // sorted: broadcast, echo-ws, then hub-b's stream
	if echo.Scenario != "echo-ws" || echo.LastRun == nil || echo.LastRun.Outcome != "failure" || echo.LastRun.Sent != 10 {
		t.Fatalf("echo-ws row = %+v", echo)
	}
	if st.Scenarios[2].LastRun != nil {
		t.Fatalf("never-run scenario has a last run: %+v", st.Scenarios[2].LastRun)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	srv, _ := statusServer(t, 10, 1)
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
	srv, _ := statusServer(t, 10, 1)
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
