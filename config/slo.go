package config

import (
	"time"

	"github.com/hubprobe/hubprobe/slo"
)

// SLO is the slo: section of a target or a scenario: the objective of the
// capacity definition (expected deliveries within 1 s, lost ones counted
// bad) and the window it is measured over. A key left out is inherited:
// a scenario's from its target's slo, a target's from slo.Default.
type SLO struct {
	// Objective is the share of expected deliveries that must arrive
	// within 1 s, greater than 0 and less than 1.
	Objective float64 `yaml:"objective,omitempty"`
	// Window is the window the error budget is measured over, written as
	// PromQL writes durations: one of slo.Windows.
	Window SLOWindow `yaml:"window,omitempty"`
}

// SLOWindow is a window written in days ("30d"), which Go's durations do
// not spell.
type SLOWindow time.Duration

// ParseScalar reads "30d", "28d", "720h".
func (w *SLOWindow) ParseScalar(text string) error {
	d, err := slo.ParseWindow(text)
	*w = SLOWindow(d)
	return err
}

// Expected says what ParseScalar accepts, for the decoder's errors.
func (SLOWindow) Expected() string { return `a window such as "30d"` }

// MarshalYAML writes the window as it is read, so a printed config parses
// again.
func (w SLOWindow) MarshalYAML() (any, error) { return slo.WindowName(time.Duration(w)), nil }

// targetSLO checks a target's slo: section.
func (v *validator) targetSLO(item string, t *Target) error {
	if t.SLO == nil {
		return nil
	}
	return v.sloSection(keyPath(item, "slo"), t.SLO)
}

// sloSection checks the keys an slo: section writes.
func (v *validator) sloSection(key string, s *SLO) error {
	if p := keyPath(key, "objective"); v.Has(p) {
		if msg := slo.CheckRatio(s.Objective); msg != "" {
			return v.Errorf(p, "%s", msg)
		}
	}
	if p := keyPath(key, "window"); v.Has(p) {
		if msg := slo.CheckWindow(time.Duration(s.Window)); msg != "" {
			return v.Errorf(p, "%s", msg)
		}
	}
	return nil
}

// scenarioSLO checks a scenario's slo: section and resolves the
// scenario's objective: each key from the scenario's section, else its
// target's, else slo.Default.
func (v *validator) scenarioSLO(item string, s *Scenario, c *Config) error {
	key := keyPath(item, "slo")
	if s.SLO != nil && s.Mode == ModeCapacitySearch {
		return v.Errorf(key, "not allowed with mode: %s, which saturates the hub on purpose and has no objective", ModeCapacitySearch)
	}
	if s.SLO != nil {
		if err := v.sloSection(key, s.SLO); err != nil {
			return err
		}
	}
	s.Objective = slo.Default
	for i, t := range c.Targets {
		if t.Name == s.Target {
			s.Objective = t.SLO.over(v, keyPath(indexPath("targets", i), "slo"), s.Objective)
		}
	}
	s.Objective = s.SLO.over(v, key, s.Objective)
	return nil
}

// over returns base with the keys this section writes (at key) in its
// place.
func (s *SLO) over(v *validator, key string, base slo.Objective) slo.Objective {
	if s == nil {
		return base
	}
	if v.Has(keyPath(key, "objective")) {
		base.Ratio = s.Objective
	}
	if v.Has(keyPath(key, "window")) {
		base.Window = time.Duration(s.Window)
	}
	return base
}
