package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

func (v *validator) scenarios(c *Config) error {
	if len(c.Scenarios) == 0 {
		return v.Errorf("scenarios", "at least one scenario is required")
	}
	seen := map[string]int{}
	for i := range c.Scenarios {
		item, s := indexPath("scenarios", i), &c.Scenarios[i]
		if err := firstError(
			v.name(item, "scenario", s.Name, seen),
			v.scenarioTarget(item, s, c),
			v.profile(item, s),
			v.profileService(item, s, c),
			v.oneOf(keyPath(item, "kind"), "kind", s.Kind, v.kinds.names()),
			v.scenarioWire(item, s, c),
			v.kindFitsTarget(item, s, c),
			v.load(item, s),
			v.capacitySearch(item, s),
			v.held(item, s),
			v.scenarioSLO(item, s, c),
		); err != nil {
			return err
		}
		interval, err := v.schedule(item, s)
		if err != nil {
			return err
		}
		if err := firstError(v.timeout(item, s, interval), v.messageFits(item, s, c)); err != nil {
			return err
		}
	}
	return nil
}

// scenarioTarget defaults an empty target to the only one there is.
func (v *validator) scenarioTarget(item string, s *Scenario, c *Config) error {
	key := keyPath(item, "target")
	switch _, ok := c.Target(s.Target); {
	case ok:
		return nil
	case s.Target == "" && len(c.Targets) == 1:
		s.Target = c.Targets[0].Name
		return nil
	case s.Target == "":
		return v.Errorf(key, "must not be empty when there is more than one target")
	}
	return v.Errorf(key, "unknown target %q", s.Target)
}

// load checks the sizes and rates of a run and fills group_size.
func (v *validator) load(item string, s *Scenario) error {
	key := func(k string) string { return keyPath(item, k) }
	if !v.Has(key("group_size")) && !s.Profile.sets("group_size") {
		s.GroupSize = min(DefaultGroupSize, s.Connections)
	}
	conns := fmt.Sprintf("connections (%d)", s.Connections)
	return firstError(
		v.positive(key("duration"), s.Duration),
		v.intRange(key("connections"), s.Connections, 1, MaxConnections, fmt.Sprint(MaxConnections)),
		v.intRange(key("connect_concurrency"), s.ConnectConcurrency, 1, MaxConnections, fmt.Sprint(MaxConnections)),
		v.positive(key("connect_timeout"), s.ConnectTimeout),
		v.intRange(key("message_size"), s.MessageSize, 0, MaxMessageSize, fmt.Sprint(MaxMessageSize)),
		v.positive(key("send_interval"), s.SendInterval),
		v.intRange(key("senders"), s.Senders, 0, s.Connections, conns),
		v.intRange(key("group_size"), s.GroupSize, 1, s.Connections, conns),
		v.positive(key("loss_timeout"), s.LossTimeout),
		v.positive(key("max_send_lag"), s.MaxSendLag),
		v.notNegative(key("stream_item_delay"), s.StreamItemDelay),
		v.intRange(key("batch_size"), s.BatchSize, 1, MaxBatchSize, fmt.Sprint(MaxBatchSize)),
	)
}

// kindFitsTarget pairs REST kinds with serverless targets and hub-method
// kinds with default ones: in serverless mode the service takes no hub
// invocations from clients, and REST sends need the connection string.
// Web PubSub targets have no modes: their clients and REST calls both
// come from the connection string.
func (v *validator) kindFitsTarget(item string, s *Scenario, c *Config) error {
	t, ok := c.Target(s.Target)
	switch {
	case !ok || t.WebPubSub():
		return nil // scenarioTarget reports a missing target
	case restKind(s.Kind) && !t.Serverless():
		return v.Errorf(keyPath(item, "kind"), "%q sends through the REST API and needs a target with mode: %s, not %q",
			s.Kind, TargetModeServerless, t.Name)
	case !restKind(s.Kind) && t.Serverless():
		return v.Errorf(keyPath(item, "kind"), "%q invokes hub methods, which serverless mode does not take from clients; target %q needs mode: %s",
			s.Kind, t.Name, TargetModeDefault)
	}
	return nil
}

// capacitySearch checks mode and, for a capacity search, its ramp: it must
// start within the connections and take at least one step.
func (v *validator) capacitySearch(item string, s *Scenario) error {
	key := keyPath(item, "capacity_search")
	if err := v.oneOf(keyPath(item, "mode"), "mode", s.Mode, Modes); err != nil {
		return err
	}
	if s.Mode != ModeCapacitySearch {
		if s.CapacitySearch != nil {
			return v.Errorf(key, "only allowed with mode: %s", ModeCapacitySearch)
		}
		return nil
	}
	if s.CapacitySearch == nil {
		c := DefaultCapacitySearch
		s.CapacitySearch = &c
	}
	c, defaults := s.CapacitySearch, CapacitySearchFor(s.Connections)
	if !v.Has(keyPath(key, "base_sending")) {
		c.BaseSending = defaults.BaseSending
	}
	if !v.Has(keyPath(key, "step")) {
		c.Step = defaults.Step
	}
	conns := fmt.Sprintf("connections (%d)", s.Connections)
	return firstError(
		v.intRange(keyPath(key, "base_sending"), c.BaseSending, 1, s.Connections, conns),
		v.intRange(keyPath(key, "step"), c.Step, 1, s.Connections, conns),
		v.positive(keyPath(key, "step_duration"), c.StepDuration),
		v.intRange(keyPath(key, "max_steps"), c.MaxSteps, 0, MaxConnections, fmt.Sprint(MaxConnections)),
	)
}

// held checks a held scenario's section, filled with its defaults when
// absent: its reports must come no faster than the loss timeout lets each
// one's messages settle, and no slower than one send of each connection.
func (v *validator) held(item string, s *Scenario) error {
	key := keyPath(item, "held")
	if s.Kind != KindHeld {
		if s.Held != nil {
			return v.Errorf(key, "only allowed with kind: %s", KindHeld)
		}
		return nil
	}
	if s.Mode != ModeRun {
		return v.Errorf(keyPath(item, "mode"), "a held scenario runs as long as hubprobe does; mode must be %s", ModeRun)
	}
	if s.Held == nil {
		h := DefaultHeld
		s.Held = &h
	}
	report := keyPath(key, "report_interval")
	if err := v.durationRange(report, s.Held.ReportInterval, MinHeldReportInterval, MaxHeldReportInterval); err != nil {
		return err
	}
	switch {
	case s.Held.ReportInterval <= s.LossTimeout:
		return v.Errorf(report, "%s must be longer than loss_timeout (%s)", s.Held.ReportInterval, s.LossTimeout)
	case s.SendInterval > s.Held.ReportInterval:
		return v.Errorf(keyPath(item, "send_interval"), "%s must not be longer than held.report_interval (%s)", s.SendInterval, s.Held.ReportInterval)
	}
	return nil
}

// schedule checks the cron spec and returns the interval of an "@every"
// schedule, 0 for calendar schedules.
func (v *validator) schedule(item string, s *Scenario) (time.Duration, error) {
	key, spec := keyPath(item, "schedule"), s.Schedule
	sched, err := s.CronSchedule()
	if err != nil {
		return 0, v.Errorf(key, "invalid schedule %q: %s", spec, err)
	}
	every, ok := sched.(cron.ConstantDelaySchedule)
	if !ok {
		return 0, nil
	}
	// cron rounds "@every 1500ms" down to 1s; refuse rather than run at a
	// rate other than the one written.
	_, written, _ := strings.Cut(spec, "@every ")
	if d, _ := time.ParseDuration(strings.TrimSpace(written)); d != every.Delay {
		return 0, v.Errorf(key, "invalid schedule %q: interval must be a whole number of seconds, at least 1s", spec)
	}
	return every.Delay, nil
}

// timeout fills the default timeout and checks that a run fits its
// schedule, so runs of one scenario never overlap.
func (v *validator) timeout(item string, s *Scenario, interval time.Duration) error {
	busy, busyKey, busyName := s.Duration, keyPath(item, "duration"), "duration"
	if s.Mode == ModeCapacitySearch {
		busy, busyKey = s.CapacitySearch.searchLength(s.Connections), keyPath(item, "capacity_search")
		busyName = "the capacity search's longest ramp"
	}
	if interval > 0 && busy >= interval {
		if busyName == "duration" {
			return v.Errorf(busyKey, "must be shorter than the schedule interval %s, got %s", interval, busy)
		}
		return v.Errorf(busyKey, "%s (%s) must be shorter than the schedule interval %s", busyName, busy, interval)
	}
	key := keyPath(item, "timeout")
	if !v.Has(key) {
		s.Timeout = s.ConnectTimeout + busy + s.LossTimeout + DefaultTimeoutPad
		if interval > 0 {
			s.Timeout = min(s.Timeout, interval)
		}
		return nil
	}
	if s.Timeout <= busy {
		return v.Errorf(key, "must be greater than %s %s, got %s", busyName, busy, s.Timeout)
	}
	if interval > 0 && s.Timeout > interval {
		return v.Errorf(key, "must not exceed the schedule interval %s, got %s", interval, s.Timeout)
	}
	return nil
}

// messageFits refuses messages the embedded hub would reject anyway.
func (v *validator) messageFits(item string, s *Scenario, c *Config) error {
	t, _ := c.Target(s.Target)
	if !t.Embedded || int64(s.MessageSize) <= t.EmbeddedHub.MaxMessageSize {
		return nil
	}
	return v.Errorf(keyPath(item, "message_size"), "must not exceed max_message_size %d of embedded target %q, got %d",
		t.EmbeddedHub.MaxMessageSize, t.Name, s.MessageSize)
}

// transports checks the fallback list and that MessagePack, a binary
// protocol, never has to ride Server-Sent Events, which carry text only.
func (v *validator) transports(item string, s *Scenario) error {
	key := keyPath(item, "fallback_transports")
	for i, t := range s.FallbackTransports {
		if err := v.oneOf(indexPath(key, i), "transport", t, Transports); err != nil {
			return err
		}
	}
	if s.Protocol != "messagepack" {
		return nil
	}
	for _, t := range append([]string{s.Transport}, s.FallbackTransports...) {
		if t == "sse" {
			return v.Errorf(keyPath(item, "protocol"), "messagepack needs a binary transport; sse carries text only")
		}
	}
	return nil
}
