package scenarios_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/throttle"
)

// pauseStart is the injected clock's instant of a pause's first throttle.
var pauseStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pausedFor is how long p holds sends from at on: the first instant, to
// the nanosecond, at which it no longer holds them.
func pausedFor(p *scenarios.Pause, at time.Time) time.Duration {
	lo, hi := time.Duration(0), time.Hour
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, held := p.Holding(at.Add(mid)); held {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// Without Retry-After, each throttle in a row pauses for a random time
// between half its ceiling and the ceiling, which starts at 1 s and
// doubles up to 30 s: 0.5–1 s, 1–2 s, 2–4 s, … 15–30 s, and stays there
// (40 throttles at the cap, so a cap a little higher shows too). A send
// the service takes starts the doubling over.
func TestBackoffWithoutRetryAfterDoubles(t *testing.T) {
	p, at := &scenarios.Pause{}, pauseStart
	ceilings := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
	ceilings = append(ceilings, slices.Repeat([]time.Duration{30 * time.Second}, 40)...)
	for i, ceiling := range ceilings {
		p.Throttle(throttle.HTTP429, 0, at)
		if d := pausedFor(p, at); d < ceiling/2 || d > ceiling {
			t.Errorf("throttle %d in a row without Retry-After paused %v, want %v to %v", i+1, d, ceiling/2, ceiling)
		}
		at = at.Add(ceiling) // the pause is over before the next throttle
	}
	p.Accepted()
	p.Throttle(throttle.HTTP429, 0, at)
	if d := pausedFor(p, at); d < 500*time.Millisecond || d > time.Second {
		t.Errorf("the first throttle after an accepted send paused %v, want 500ms to 1s", d)
	}
}

// The backoff is jittered: pauses after the same number of throttles
// differ, so probes throttled together do not come back together.
func TestBackoffIsJittered(t *testing.T) {
	seen := map[time.Duration]bool{}
	for range 20 {
		p := &scenarios.Pause{}
		p.Throttle(throttle.HTTP429, 0, pauseStart)
		seen[pausedFor(p, pauseStart)] = true
	}
	if len(seen) < 2 {
		t.Errorf("20 first throttles all paused %v: no jitter", seen)
	}
}

// A shorter pause never shortens a longer one: a throttle asking for 1 s,
// or a backoff, while a 30 s pause runs leaves the 30 s and its reason in
// place; a longer one extends the pause, with its own reason.
func TestShorterPauseNeverShortensALongerOne(t *testing.T) {
	p := &scenarios.Pause{}
	p.Throttle(throttle.ConnectionLimit, 30*time.Second, pauseStart)
	p.Throttle(throttle.HTTP429, time.Second, pauseStart.Add(2*time.Second))
	p.Throttle(throttle.MessageLimit, 0, pauseStart.Add(3*time.Second)) // third in a row: at most 4 s
	if d := pausedFor(p, pauseStart); d != 30*time.Second {
		t.Errorf("paused %v after a 30 s Retry-After and shorter throttles, want 30s", d)
	}
	if reason, held := p.Holding(pauseStart.Add(29 * time.Second)); !held || reason != throttle.ConnectionLimit {
		t.Errorf("at 29 s: held %v for %q, want held for %q", held, reason, throttle.ConnectionLimit)
	}
	p.Throttle(throttle.HTTP429, time.Minute, pauseStart.Add(10*time.Second))
	if d := pausedFor(p, pauseStart); d != 70*time.Second {
		t.Errorf("paused %v after a 1 min Retry-After at 10 s, want 1m10s", d)
	}
	if reason, _ := p.Holding(pauseStart.Add(69 * time.Second)); reason != throttle.HTTP429 {
		t.Errorf("the longer pause holds for %q, want %q", reason, throttle.HTTP429)
	}
}

// One pause per target: a 429 that one scenario of a target sees holds
// back every other scenario of the target, also one that a reload changed
// (the scheduler runs it on a job the resolver made after the reload,
// while the unchanged scenario keeps its job from before), and no scenario
// of another target.
func TestOnePausePerTargetAcrossScenariosAndReloads(t *testing.T) {
	t.Parallel()
	srv := hubtest.Start(t, hub.Options{AccessKey: matrixKey})
	front := newRefusingFront(t, "60")
	cfg := pauseConfig(srv, front.srv.URL)
	r := scenarios.Resolver{Recorder: scenarios.Discarding, Logger: zerolog.Nop(), Pauses: &scenarios.Pauses{}}
	before, err := r.Jobs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reloaded := *cfg
	reloaded.Scenarios = slices.Clone(cfg.Scenarios)
	reloaded.Scenarios[1].Duration = 900 * time.Millisecond
	after, err := r.Jobs(&reloaded)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if got := before[0].Runner.Run(ctx); got.Throttled[throttle.HTTP429] != 3 || got.Sent != 0 || len(front.times()) != 1 {
		t.Fatalf("the REST scenario: sent %d, throttled %v, %d requests; want its one request refused and all 3 sends throttled",
			got.Sent, got.Throttled, len(front.times()))
	}
	held := after[1].Runner.Run(ctx)
	if held.Outcome != scenarios.ResultFailure || held.Sent != 0 || held.Paused != 18 ||
		held.Error != "throttled (http_429): 18 sends fell due while the target was paused after throttling" {
		t.Errorf("the reloaded echo of the same target: outcome %s (%s), sent %d, paused %d; want all 18 sends held",
			held.Outcome, held.Error, held.Sent, held.Paused)
	}
	if free := after[2].Runner.Run(ctx); free.Outcome != scenarios.ResultSuccess || free.Sent != 10 || free.Paused != 0 {
		t.Errorf("the echo of another target: outcome %s (%s), sent %d, paused %d; want all 10 sent",
			free.Outcome, free.Error, free.Sent, free.Paused)
	}
}

// pauseConfig is a serverless target whose REST API is the refusing front
// at restURL, with a rest_broadcast and an echo scenario, and another
// target with an echo scenario, all on srv.
func pauseConfig(srv *hub.Server, restURL string) *config.Config {
	rest := scenario("rest_broadcast", 1, 300*time.Millisecond, 100*time.Millisecond)
	echo := scenario("echo", 2, time.Second, 100*time.Millisecond)
	other := scenario("echo", 1, time.Second, 100*time.Millisecond)
	rest.Name, echo.Name, other.Name = "rest", "echo", "other-echo"
	rest.Target, echo.Target, other.Target = "service", "service", "other"
	return &config.Config{
		Targets: []config.Target{
			{Name: "service", Mode: config.TargetModeServerless, Hub: config.EmbeddedHubName,
				ConnectionString: config.Secret(srv.ConnectionString() + "ServerEndpoint=" + restURL + ";")},
			{Name: "other", URL: srv.URL()},
		},
		Scenarios: []config.Scenario{rest, echo, other},
	}
}
