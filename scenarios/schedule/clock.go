package schedule

import (
	"context"
	"hash/fnv"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/sleep"
	"github.com/hubprobe/hubprobe/scenarios"
)

// maxStartOffset caps the start offset of start_jitter.
const maxStartOffset = 10 * time.Second

// alignToClock makes an "@every" schedule fire at whole multiples of its
// period since the Unix epoch. robfig/cron's ConstantDelaySchedule counts
// from whenever it is asked, so two processes started a few seconds apart
// would never run together; cron specs already follow the clock.
func alignToClock(s cron.Schedule) cron.Schedule {
	if every, ok := s.(cron.ConstantDelaySchedule); ok && every.Delay > 0 {
		return everySchedule{period: every.Delay}
	}
	return s
}

// everySchedule fires at every multiple of period since the Unix epoch.
type everySchedule struct{ period time.Duration }

func (e everySchedule) Next(t time.Time) time.Time {
	p := int64(e.period)
	n := t.UnixNano()
	next := (n/p + 1) * p
	if n < 0 && n%p != 0 {
		next -= p
	}
	return time.Unix(0, next).In(t.Location())
}

// period is the schedule's interval, measured at a fixed instant so that
// every process measures the same.
func period(s cron.Schedule) time.Duration {
	if e, ok := s.(everySchedule); ok {
		return e.period
	}
	first := s.Next(time.Unix(0, 0).UTC())
	return s.Next(first).Sub(first)
}

// startOffset spreads scenarios sharing a schedule so they do not all
// start at once: below half the period, at most 10 s, and taken from the
// scenario's name, so every shard and every restart picks the same one.
func startOffset(name string, s cron.Schedule) time.Duration {
	limit := min(period(s)/2, maxStartOffset) / time.Millisecond
	if limit <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return time.Duration(h.Sum64()%uint64(limit)) * time.Millisecond
}

// runClock is when one scenario's runs start: its schedule, aligned to the
// clock, each instant moved by the start offset.
type runClock struct {
	schedule cron.Schedule
	offset   time.Duration
}

func newRunClock(sc config.Scenario, startJitter bool) (runClock, error) {
	s, err := sc.CronSchedule()
	if err != nil {
		return runClock{}, err
	}
	c := runClock{schedule: alignToClock(s)}
	if startJitter {
		c.offset = startOffset(sc.Name, c.schedule)
	}
	return c, nil
}

// next is the first run start after t.
func (c runClock) next(t time.Time) time.Time {
	return c.schedule.Next(t.Add(-c.offset)).Add(c.offset)
}

// NextStart is when the scheduler starts the scenario's first run after t:
// the same instant on every shard and every process running it.
func NextStart(sc config.Scenario, startJitter bool, t time.Time) (time.Time, error) {
	c, err := newRunClock(sc, startJitter)
	if err != nil {
		return time.Time{}, err
	}
	return c.next(t), nil
}

// WaitForStart is when a one-off run of rn starts: now, or for a shard the
// scenario's next scheduled instant, waited for, so every shard starts
// together. ok is false when ctx ended first.
func WaitForStart(ctx context.Context, rn *scenarios.Runner, log zerolog.Logger) (time.Time, bool) {
	if !rn.Shard.Sharded() {
		return time.Now(), true
	}
	at, err := NextStart(rn.Scenario, false, time.Now())
	if err != nil { // Load checked the schedule already
		return time.Time{}, false
	}
	log.Info().Time("start", at).Int("shard", rn.Shard.Index).Int("shards", rn.Shard.Count).
		Msg("waiting for the scenario's next scheduled instant, when every shard starts")
	if sleep.Until(ctx, at) != nil {
		return time.Time{}, false
	}
	return at, true
}
