// Package schedule owns time: it runs every scenario on its schedule,
// aligned to the clock so that processes and shards sharing a scenario run
// it at the same instants, and hands each run to the scenario engine or,
// for a capacity_search scenario, to the capacity search.
package schedule

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/sleep"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

// Scheduler owns time: it runs every scenario on its schedule, never two runs
// of one scenario at once, each bounded by its timeout and cancelled with the
// scheduler's context. Schedules follow the clock ("@every 30s" runs at every
// multiple of 30 s since the Unix epoch), so processes sharing a scenario run
// it together.
type Scheduler struct {
	ctx    context.Context
	log    zerolog.Logger
	search capacity.SearchOptions
	report Reporter

	mu      sync.Mutex
	entries map[string]*entry
	wg      sync.WaitGroup
}

// entry is one scheduled scenario.
type entry struct {
	scenario config.Scenario
	target   *config.Target
	runner   *scenarios.Runner
	clock    runClock
	ctx      context.Context
	cancel   context.CancelFunc
	running  atomic.Bool
	// held, for a held scenario, holds its connections instead of runs.
	held *scenarios.Held
}

// Reporter takes the Result of every run the scheduler starts or skips:
// the exporter counts runs and keeps their history from it.
type Reporter interface {
	RunFinished(res scenarios.Result)
}

// New starts an empty scheduler; Apply gives it jobs. search tunes the
// sharded capacity searches it runs; every run's result goes to report.
func New(ctx context.Context, log zerolog.Logger, search capacity.SearchOptions, report Reporter) *Scheduler {
	return &Scheduler{ctx: ctx, log: log, search: search, report: report, entries: map[string]*entry{}}
}

// Apply makes the schedule match jobs: new scenarios start, removed ones
// stop (their in-flight run is cancelled), changed ones restart, unchanged
// ones keep their rhythm. With startJitter, scenarios sharing a schedule are
// spread out rather than started at once. A job with no connection on this
// shard is not scheduled.
func (s *Scheduler) Apply(jobs []scenarios.Job, startJitter bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	wanted := map[string]bool{}
	for _, j := range jobs {
		sc := j.Runner.Scenario
		if j.Runner.Connections() == 0 {
			s.log.Info().Str("scenario", sc.Name).Int("connections", sc.Connections).Int("shards", j.Runner.Shard.Count).
				Msg("this shard has none of the scenario's connections; not running it")
			continue
		}
		wanted[sc.Name] = true
		if old, ok := s.entries[sc.Name]; ok {
			if reflect.DeepEqual(old.scenario, sc) && reflect.DeepEqual(old.target, j.Target) {
				continue
			}
			if old.held != nil && sc.Kind == config.KindHeld {
				if err := s.update(old, j); err != nil {
					return err
				}
				continue
			}
			s.remove(old)
		}
		if err := s.add(j, startJitter); err != nil {
			return err
		}
	}
	for name, e := range s.entries {
		if !wanted[name] {
			s.remove(e)
		}
	}
	return nil
}

func (s *Scheduler) add(j scenarios.Job, startJitter bool) error {
	sc := j.Runner.Scenario
	if sc.Kind == config.KindHeld {
		return s.hold(j)
	}
	clock, err := newRunClock(sc, startJitter)
	if err != nil {
		return err
	}
	e := &entry{scenario: sc, target: j.Target, runner: j.Runner, clock: clock}
	e.ctx, e.cancel = context.WithCancel(s.ctx)
	s.entries[sc.Name] = e
	s.wg.Add(1)
	go s.loop(e)
	return nil
}

func (s *Scheduler) remove(e *entry) {
	e.cancel()
	delete(s.entries, e.scenario.Name)
	if e.held != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			e.held.Stop()
		}()
	}
}

// hold starts a held scenario: its connections from now on, its reports
// to the scheduler's Reporter.
func (s *Scheduler) hold(j scenarios.Job) error {
	sc := j.Runner.Scenario
	e := &entry{scenario: sc, target: j.Target, runner: j.Runner}
	e.ctx, e.cancel = context.WithCancel(s.ctx)
	held, err := j.Runner.Hold(e.ctx, s.report.RunFinished)
	if err != nil {
		e.cancel()
		return err
	}
	e.held = held
	s.entries[sc.Name] = e
	return nil
}

// update moves a held scenario to its reloaded job in place.
func (s *Scheduler) update(e *entry, j scenarios.Job) error {
	if err := e.held.Update(j.Runner); err != nil {
		return err
	}
	e.scenario, e.target, e.runner = j.Runner.Scenario, j.Target, j.Runner
	return nil
}

// loop starts e's runs at their instants until e is removed.
func (s *Scheduler) loop(e *entry) {
	defer s.wg.Done()
	// A first run right away (after the offset) so a new canary shows data
	// within one run time rather than one schedule period; the schedule
	// takes over once it is done. Shards wait: their runs must start at the
	// same instants.
	if !e.runner.Shard.Sharded() {
		first := time.Now().Add(e.clock.offset)
		if sleep.Until(e.ctx, first) != nil {
			return
		}
		s.wg.Add(1)
		s.fire(e, first)
	}
	next := e.clock.next(time.Now())
	for sleep.Until(e.ctx, next) == nil {
		s.wg.Add(1)
		go s.fire(e, next)
		next = e.clock.next(time.Now())
	}
}

// fire runs the scenario unless its previous run is still going, in which
// case the run is skipped and counted.
func (s *Scheduler) fire(e *entry, at time.Time) {
	defer s.wg.Done()
	if !e.running.CompareAndSwap(false, true) {
		s.report.RunFinished(scenarios.Result{
			Target: e.scenario.Target, Scenario: e.scenario.Name, Kind: e.scenario.Kind,
			Start: time.Now(), Outcome: scenarios.ResultSkipped, Error: "previous run still in progress",
		})
		return
	}
	defer e.running.Store(false)
	ctx, cancel := context.WithTimeout(e.ctx, e.scenario.Timeout)
	defer cancel()
	s.report.RunFinished(Run(ctx, e.runner, s.search, at))
}

// Run runs rn's scenario once, as scheduled at at: a capacity_search
// scenario runs its capacity search, tuned by search, every other one a
// run.
func Run(ctx context.Context, rn *scenarios.Runner, search capacity.SearchOptions, at time.Time) scenarios.Result {
	if rn.Scenario.Mode == config.ModeCapacitySearch {
		return capacity.SearchAt(ctx, rn, search, at).Result
	}
	return rn.RunAt(ctx, at)
}

// Stop cancels every run and waits for them to close their connections.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	for _, e := range s.entries {
		s.remove(e)
	}
	s.mu.Unlock()
	s.wg.Wait()
}
