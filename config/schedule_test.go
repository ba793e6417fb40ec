package config

import (
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

// CronSchedule gives the schedule Load checked, ready to run.
func TestCronSchedule(t *testing.T) {
	c := Default()
	sched, err := c.Scenarios[0].CronSchedule()
	if err != nil {
		t.Fatal(err)
	}
	if sched != (cron.ConstantDelaySchedule{Delay: 30 * time.Second}) {
		t.Errorf("default echo schedule %#v, want every 30s", sched)
	}
	from := time.Date(2025, 3, 1, 10, 2, 0, 0, time.UTC)
	calendar, err := Scenario{Schedule: "CRON_TZ=UTC */5 * * * *"}.CronSchedule()
	if err != nil {
		t.Fatal(err)
	}
	if next := calendar.Next(from); !next.Equal(from.Add(3 * time.Minute)) {
		t.Errorf("*/5 after 10:02 runs at %s, want 10:05", next)
	}
	for _, spec := range []string{"every 30s", "TZ=UTC", ""} {
		if _, err := (Scenario{Schedule: spec}).CronSchedule(); err == nil {
			t.Errorf("schedule %q parsed", spec)
		}
	}
}
