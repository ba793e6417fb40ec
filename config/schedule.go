package config

import (
	"errors"
	"strings"

	"github.com/robfig/cron/v3"
)

// CronSchedule parses the scenario's schedule with the parser Load checks
// it with: robfig/cron's standard five fields or a descriptor such as
// "@every 30s". The scheduler should run on this schedule rather than parse
// the spec again, so that what Load accepts and what runs cannot differ.
func (s Scenario) CronSchedule() (cron.Schedule, error) { return parseSchedule(s.Schedule) }

// parseSchedule wraps cron.ParseStandard, which in v3.0.1 slices out of
// range on a time zone prefix without a following schedule.
func parseSchedule(spec string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, errors.New("malformed schedule")
		}
	}()
	if (strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=")) && !strings.Contains(spec, " ") {
		return nil, errors.New("time zone must be followed by a space and a schedule")
	}
	return cron.ParseStandard(spec)
}
