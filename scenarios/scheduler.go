package scenarios

import (
	"context"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
)

// cronParser accepts the standard five fields and descriptors like @every.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Job is one scenario resolved against its target, ready to run on its
// schedule (see Resolver).
type Job struct {
	Runner *Runner
	// Target is what the runner's endpoint was resolved from: a change to
	// it restarts the job as a change to the scenario does.
	Target *config.Target
}

// Scheduler owns time: it runs every scenario on its schedule, never two runs
// of one scenario at once, each bounded by its timeout and cancelled with the
// scheduler's context.
type Scheduler struct {
	ctx  context.Context
	log  zerolog.Logger
	cron *cron.Cron

	mu      sync.Mutex
	entries map[string]*entry
	wg      sync.WaitGroup
}

// entry is one scheduled scenario.
type entry struct {
	id       cron.EntryID
	scenario config.Scenario
	target   *config.Target
	runner   *Runner
	offset   time.Duration
	ctx      context.Context
	cancel   context.CancelFunc
	running  atomic.Bool
}

// NewScheduler starts an empty scheduler; Apply gives it jobs.
func NewScheduler(ctx context.Context, log zerolog.Logger) *Scheduler {
	s := &Scheduler{ctx: ctx, log: log, entries: map[string]*entry{}}
	s.cron = cron.New(cron.WithParser(cronParser), cron.WithLogger(cron.DiscardLogger))
	s.cron.Start()
	return s
}

// Apply makes the schedule match jobs: new scenarios start, removed ones
// stop (their in-flight run is cancelled), changed ones restart, unchanged
// ones keep their rhythm. With startJitter, scenarios sharing a schedule are
// spread out rather than started at once.
func (s *Scheduler) Apply(jobs []Job, startJitter bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	wanted := map[string]bool{}
	for _, j := range jobs {
		sc := j.Runner.Scenario
		wanted[sc.Name] = true
		if old, ok := s.entries[sc.Name]; ok {
			if reflect.DeepEqual(old.scenario, sc) && reflect.DeepEqual(old.target, j.Target) {
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

func (s *Scheduler) add(j Job, startJitter bool) error {
	sc := j.Runner.Scenario
	sched, err := cronParser.Parse(sc.Schedule)
	if err != nil {
		return err
	}
	e := &entry{scenario: sc, target: j.Target, runner: j.Runner}
	if startJitter {
		e.offset = jitter(sched)
	}
	e.ctx, e.cancel = context.WithCancel(s.ctx)
	e.id = s.cron.Schedule(sched, cron.FuncJob(func() { s.fire(e) }))
	s.entries[sc.Name] = e
	// A first run right away (after the offset) so a new canary shows data
	// within one run time rather than one schedule period.
	go s.fire(e)
	return nil
}

func (s *Scheduler) remove(e *entry) {
	s.cron.Remove(e.id)
	e.cancel()
	delete(s.entries, e.scenario.Name)
}

// fire runs the scenario unless its previous run is still going, in which
// case the run is skipped and counted.
func (s *Scheduler) fire(e *entry) {
	if !e.running.CompareAndSwap(false, true) {
		e.runner.Recorder.RunFinished(Result{
			Target: e.scenario.Target, Scenario: e.scenario.Name, Kind: e.scenario.Kind,
			Start: time.Now(), Outcome: ResultSkipped, Error: "previous run still in progress",
		})
		return
	}
	s.wg.Add(1)
	defer s.wg.Done()
	defer e.running.Store(false)
	if !sleepCtx(e.ctx, e.offset) {
		return
	}
	ctx, cancel := context.WithTimeout(e.ctx, e.scenario.Timeout)
	defer cancel()
	e.runner.Run(ctx)
}

// Stop cancels every run and waits for them to close their connections.
func (s *Scheduler) Stop() {
	<-s.cron.Stop().Done()
	s.mu.Lock()
	for _, e := range s.entries {
		s.remove(e)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// jitter spreads scenarios sharing a schedule so they do not all start at
// once: a fixed offset below half the period, capped at 10 s.
func jitter(sched cron.Schedule) time.Duration {
	now := time.Now()
	next := sched.Next(now)
	period := sched.Next(next).Sub(next)
	limit := min(period/2, 10*time.Second)
	if limit <= 0 {
		return 0
	}
	return rand.N(limit)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
