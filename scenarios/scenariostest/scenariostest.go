// Package scenariostest holds what the tests of the scenario engine, the
// capacity search and the scheduler share: small fast scenarios, a
// recorder that discards everything, jobs and a scheduler reporting into
// a registry of their own, and readers of that registry. No product code
// imports it.
package scenariostest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/scenarios/schedule"
)

// Scenario returns a small, fast scenario of the given kind.
func Scenario(kind string, connections int, duration, interval time.Duration) config.Scenario {
	s := config.DefaultScenario
	s.Name, s.Target, s.Kind = kind, "hub", kind
	s.Connections, s.Duration, s.SendInterval = connections, duration, interval
	s.MessageSize = 256
	s.LossTimeout = 2 * time.Second
	s.GroupSize = config.DefaultGroupSize
	// Many small runs share two cores here; the saturation verdict has
	// tests of its own, so these tolerate a late pacer.
	s.MaxSendLag = 2 * time.Second
	return s
}

// Counter is the value of the series name{labels} in reg: a counter's or
// gauge's value, a histogram's sample count, or a summary's quantile named
// by the label quantile. It fails t when there is no such series.
func Counter(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				// quantile is a label only in the text format; summaries
				// carry it on each quantile, matched below.
				if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
					continue metrics
				}
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			case m.Summary != nil:
				for _, q := range m.GetSummary().GetQuantile() {
					if strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64) == want["quantile"] {
						return q.GetValue()
					}
				}
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// WaitUntil polls cond every 50 ms and fails t when it is not met within
// limit.
func WaitUntil(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// OneJob is s resolved against a hub at url, reporting to m.
func OneJob(m *exporter.Metrics, url string, s config.Scenario) []scenarios.Job {
	info := exporter.ScenarioInfo{Target: s.Target, Scenario: s.Name, Kind: s.Kind}
	runner := &scenarios.Runner{Scenario: s, Endpoint: scenarios.Endpoint{URL: url}, Recorder: m.Recorder(info)}
	return []scenarios.Job{{Runner: runner, Target: &config.Target{Name: s.Target, URL: "http://unused"}}}
}

// SchedulerFixture runs a Scheduler whose runners report into one
// registry.
type SchedulerFixture struct {
	Reg     *prometheus.Registry
	Metrics *exporter.Metrics
	Sched   *schedule.Scheduler
	URL     string
}

// NewSchedulerFixture is an empty scheduler for jobs against a hub at url.
func NewSchedulerFixture(t *testing.T, url string) *SchedulerFixture {
	t.Helper()
	f := &SchedulerFixture{Reg: prometheus.NewRegistry(), URL: url}
	var err error
	if f.Metrics, err = exporter.NewMetrics(f.Reg); err != nil {
		t.Fatal(err)
	}
	f.Sched = schedule.New(context.Background(), zerolog.Nop(), capacity.SearchOptions{})
	return f
}

// StopBounded stops sched and fails t unless Stop returns within 5 s.
func StopBounded(t *testing.T, sched *schedule.Scheduler) {
	t.Helper()
	stopped := make(chan struct{})
	go func() { sched.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return within 5 s")
	}
}

// NopRecorder discards everything a run records.
type NopRecorder struct{ discard }

// discard holds NopRecorder's methods: each of scenarios.Recorder's, doing
// nothing.
type discard struct{}

func (discard) HTTPResponse(string, int)           {}
func (discard) BytesSent(int)                      {}
func (discard) BytesReceived(int)                  {}
func (discard) MessageSent()                       {}
func (discard) MessageReceived(scenarios.Delivery) {}
func (discard) MessagesLost(int)                   {}
func (discard) MessageDuplicated()                 {}
func (discard) MessageReordered()                  {}
func (discard) SendLag(time.Duration)              {}
func (discard) Throttled(string)                   {}
func (discard) Connected(clientconn.ConnectTiming) {}
func (discard) RoundTrip(time.Duration)            {}
func (discard) ConnectionFailed(string)            {}
func (discard) ConnectionOpened()                  {}
func (discard) ConnectionClosed()                  {}
func (discard) Reconnected()                       {}
func (discard) RunFinished(scenarios.Result)       {}
