// Package scenariostest holds what the tests of the scenario engine, the
// capacity search and the scheduler share: small fast scenarios, a
// recorder that tallies everything a run records, jobs and a scheduler
// reporting to one, and the results it returns. No product code imports
// it.
package scenariostest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/scenarios/schedule"
	"github.com/hubprobe/hubprobe/scenarios/wire/classicwire"
	"github.com/hubprobe/hubprobe/scenarios/wire/corewire"
	"github.com/hubprobe/hubprobe/scenarios/wire/wpswire"
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

// OneJob is s resolved against a hub at url, reporting to rec.
func OneJob(rec scenarios.Recorder, url string, s config.Scenario) []scenarios.Job {
	runner := &scenarios.Runner{Scenario: s, Endpoint: SignalR(url), Recorder: rec}
	return []scenarios.Job{{Runner: runner, Target: &config.Target{Name: s.Target, URL: "http://unused"}}}
}

// SchedulerFixture runs a Scheduler whose runners record into one
// Recorder and report their results to one Results.
type SchedulerFixture struct {
	Rec     *Recorder
	Results *Results
	Sched   *schedule.Scheduler
	URL     string
}

// NewSchedulerFixture is an empty scheduler for jobs against a hub at url.
func NewSchedulerFixture(t *testing.T, url string) *SchedulerFixture {
	t.Helper()
	f := &SchedulerFixture{Rec: NewRecorder(), Results: &Results{}, URL: url}
	f.Sched = schedule.New(context.Background(), zerolog.Nop(), capacity.SearchOptions{}, f.Results)
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

// Results keeps the result of every run a scheduler reports.
type Results struct {
	mu   sync.Mutex
	list []scenarios.Result
}

// RunFinished keeps res.
func (r *Results) RunFinished(res scenarios.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, res)
}

// All is every result so far, in the order they came.
func (r *Results) All() []scenarios.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

// Count is how many results so far have the outcome.
func (r *Results) Count(outcome string) int {
	n := 0
	for _, res := range r.All() {
		if res.Outcome == outcome {
			n++
		}
	}
	return n
}

// SignalR is the endpoint of an ASP.NET Core SignalR hub at url.
func SignalR(url string) scenarios.Endpoint {
	return scenarios.Endpoint{Wire: corewire.New(corewire.Target{URL: url})}
}

// Serverless is the endpoint of Azure SignalR Service (or its emulation)
// in serverless mode, by its connection string, at hubprobe's embedded
// hub name, on REST API version apiVersion ("" for the default).
func Serverless(cs azure.ConnectionString, apiVersion string) scenarios.Endpoint {
	return scenarios.Endpoint{Wire: corewire.New(corewire.Target{Serverless: &corewire.Serverless{
		ConnectionString: cs, Hub: config.EmbeddedHubName, RESTAPIVersion: apiVersion}})}
}

// Classic is the endpoint of the classic ASP.NET SignalR benchmark hub
// (Signalrbench) of an app server at url.
func Classic(url string) scenarios.Endpoint {
	return scenarios.Endpoint{Wire: classicwire.New(classicwire.Target{URL: url, Hub: "Signalrbench"})}
}

// WebPubSub is the endpoint of an Azure Web PubSub hub, by its
// connection string.
func WebPubSub(cs azure.ConnectionString, hub string) scenarios.Endpoint {
	return scenarios.Endpoint{Wire: wpswire.New(wpswire.Target{ConnectionString: cs, Hub: hub})}
}
