package schedule

import (
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/hubprobe/hubprobe/config"
)

// "@every 30s" fires at multiples of 30 s since the Unix epoch, whenever it
// is asked; robfig/cron's own schedule counts from the moment asked.
func TestEveryScheduleFollowsTheClock(t *testing.T) {
	raw, err := config.Scenario{Schedule: "@every 30s"}.CronSchedule()
	if err != nil {
		t.Fatal(err)
	}
	s := alignToClock(raw)
	for _, asked := range []int64{1_699_999_981, 1_699_999_995, 1_700_000_009} {
		at := time.Unix(asked, 123)
		if got := s.Next(at); got.Unix() != 1_700_000_010 || got.Nanosecond() != 0 {
			t.Errorf("Next(%d s + 123 ns) = %s, want 1700000010 exactly", asked, got)
		}
		if raw.Next(at).Unix() == 1_700_000_010 {
			t.Errorf("robfig's schedule already followed the clock for %d; this test no longer shows why alignToClock exists", asked)
		}
	}
	if got := s.Next(time.Unix(1_700_000_010, 0)); got.Unix() != 1_700_000_040 {
		t.Errorf("Next on an instant = %d, want the one after", got.Unix())
	}
	if p := period(s); p != 30*time.Second {
		t.Errorf("period %s", p)
	}
	cronSpec, _ := config.Scenario{Schedule: "*/5 * * * *"}.CronSchedule()
	if alignToClock(cronSpec) != cronSpec || period(cronSpec) != 5*time.Minute {
		t.Errorf("a cron spec is changed, or its period is %s", period(cronSpec))
	}
}

// The start offset is a function of the name and the schedule alone, below
// half the period and at most 10 s; the run clock moves every instant by it.
func TestStartOffsetComesFromTheName(t *testing.T) {
	every := func(spec string) cron.Schedule {
		s, err := config.Scenario{Schedule: spec}.CronSchedule()
		if err != nil {
			t.Fatal(err)
		}
		return alignToClock(s)
	}
	offsets := map[time.Duration]bool{}
	for _, name := range []string{"echo", "broadcast", "send_to_group", "send_to_client", "capacity"} {
		o := startOffset(name, every("@every 1m"))
		if o != startOffset(name, every("@every 1m")) || o < 0 || o >= 10*time.Second || o%time.Millisecond != 0 {
			t.Errorf("%s: offset %s is not a fixed whole millisecond below 10 s", name, o)
		}
		if short := startOffset(name, every("@every 4s")); short >= 2*time.Second {
			t.Errorf("%s: offset %s for a 4 s period, want below 2 s", name, short)
		}
		offsets[o] = true
	}
	if len(offsets) < 4 {
		t.Errorf("five names share %d offsets", len(offsets))
	}
	sc := config.Scenario{Name: "echo", Schedule: "@every 1m"}
	at, err := NextStart(sc, true, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Unix(1_700_000_040, 0).Add(startOffset("echo", every("@every 1m"))); !at.Equal(want) {
		t.Errorf("NextStart = %s, want %s", at, want)
	}
	if again, _ := NextStart(sc, true, at.Add(-time.Nanosecond)); !again.Equal(at) {
		t.Errorf("NextStart just before a start = %s, want that start %s", again, at)
	}
}
