package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hubprobe/hubprobe/tiers"
)

// Profile sizes a scenario from one row of a vendor's published tier table
// (see `hubprobe plan` and docs/tiers.md), scaled down: the row's connection
// and sender counts times Scale, its message size and send interval as they
// are, and the table's group rule.
type Profile struct {
	Service  string  `yaml:"service"`
	Scenario string  `yaml:"scenario"`
	Units    int     `yaml:"units"`
	Scale    float64 `yaml:"scale"`

	// Set lists the scenario keys the profile filled in; Explicit lists the
	// keys it would have filled but that the file sets itself. Load fills
	// both, in the order of profileKeys.
	Set      []string `yaml:"-"`
	Explicit []string `yaml:"-"`
}

// Tier declares the service tier of a target: which vendor's tables apply
// and how many units the resource has.
type Tier struct {
	Service string `yaml:"service"`
	Units   int    `yaml:"units"`
}

// profileKinds maps a tier table to the scenario kind that runs its
// workload; on a Web PubSub target, echo is the upstream echo. A table
// left out would have no hubprobe kind.
var profileKinds = map[string]string{
	"echo":                 "echo",
	tiers.KindUpstreamEcho: "echo",
	"broadcast":            "broadcast",
	tiers.TableSmallGroup:  "send_to_group",
	tiers.TableBigGroup:    "send_to_group",
	"send_to_connection":   "send_to_client",
	"rest_broadcast":       "rest_broadcast",
	"rest_send_to_user":    "rest_send_to_user",
}

// profileKeys are the scenario keys a profile can fill, in display order.
var profileKeys = []string{"connections", "senders", "group_size", "message_size", "send_interval"}

// profile checks the profile of a scenario and fills, from its table row,
// every key the file left out. It runs before the scenario's own checks, so
// what a profile gives is held to the same limits as what is written.
func (v *validator) profile(item string, s *Scenario) error {
	p := s.Profile
	if p == nil {
		return nil
	}
	key := keyPath(item, "profile")
	row, err := v.profileRow(key, p)
	if err != nil {
		return err
	}
	kind, err := v.profileKind(item, key, p, s.Kind)
	if err != nil {
		return err
	}
	s.Kind = kind
	if n := float64(row.Connections) * p.Scale; n > MaxConnections && !v.Has(keyPath(item, "connections")) {
		return v.Errorf(keyPath(key, "scale"), "gives %.0f connections, more than %d; lower the scale or write connections", n, MaxConnections)
	}
	values := scaleRow(row, p.Scale, s.Connections, v.Has(keyPath(item, "connections")))
	p.Set, p.Explicit = nil, nil
	for _, k := range profileKeys {
		if _, applies := values[k]; !applies {
			continue
		}
		if v.Has(keyPath(item, k)) {
			p.Explicit = append(p.Explicit, k)
			continue
		}
		values[k](s)
		p.Set = append(p.Set, k)
	}
	return nil
}

// profileRow checks service, scenario, units and scale, and looks the row up.
func (v *validator) profileRow(key string, p *Profile) (tiers.TableRow, error) {
	services := tiers.Services()
	if err := v.oneOf(keyPath(key, "service"), "service", p.Service, services); err != nil {
		return tiers.TableRow{}, err
	}
	tables, _ := tiers.Scenarios(p.Service)
	if err := v.oneOf(keyPath(key, "scenario"), "table", p.Scenario, tables); err != nil {
		return tiers.TableRow{}, err
	}
	if p.Scale <= 0 || p.Scale > 1 {
		return tiers.TableRow{}, v.Errorf(keyPath(key, "scale"), "must be greater than 0 and at most 1, got %g", p.Scale)
	}
	row, err := tiers.Row(p.Service, p.Scenario, p.Units)
	if errors.Is(err, tiers.ErrUnknownTier) {
		return row, v.Errorf(keyPath(key, "units"), "the %s %s table has no column for %d units", p.Service, p.Scenario, p.Units)
	}
	if err != nil {
		return row, v.Errorf(key, "%s", err)
	}
	return row, nil
}

// profileKind returns the kind that runs the table's workload; a kind
// written in the file must be that one.
func (v *validator) profileKind(item, key string, p *Profile, written string) (string, error) {
	kind, ok := profileKinds[p.Scenario]
	if !ok {
		return "", v.Errorf(keyPath(key, "scenario"), "table %q has no hubprobe scenario kind (tables with one: %s)",
			p.Scenario, strings.Join(sortedKeys(profileKinds), ", "))
	}
	if written != "" && written != kind {
		return "", v.Errorf(keyPath(item, "kind"), "%q does not run the %s table of the profile; leave kind out or write %q",
			written, p.Scenario, kind)
	}
	return kind, nil
}

// scaleRow returns a setter for every key the row gives. Counts are scaled
// and rounded, at least 1; the group rule sizes groups from the connections
// the scenario ends up with (written or scaled).
func scaleRow(row tiers.TableRow, scale float64, written int, connectionsWritten bool) map[string]func(*Scenario) {
	scaled := func(n int64) int { return max(1, int(math.Round(float64(n)*scale))) }
	conns := scaled(row.Connections)
	if connectionsWritten {
		conns = written
	}
	values := map[string]func(*Scenario){
		"connections":   func(s *Scenario) { s.Connections = conns },
		"senders":       func(s *Scenario) { s.Senders = min(scaled(row.Senders), conns) },
		"message_size":  func(s *Scenario) { s.MessageSize = int(row.MessageSize) },
		"send_interval": func(s *Scenario) { s.SendInterval = row.SendInterval },
	}
	switch {
	case row.GroupCount == 0:
	case row.Scenario == tiers.TableBigGroup: // a fixed group count, as the guides' big groups
		size := int(math.Ceil(float64(conns) / float64(row.GroupCount)))
		values["group_size"] = func(s *Scenario) { s.GroupSize = max(size, 1) }
	default:
		values["group_size"] = func(s *Scenario) { s.GroupSize = min(int(row.GroupSize), conns) }
	}
	return values
}

// MarshalYAML leaves out the keys a profile filled in, so a printed
// scenario parses back to the same one: the profile fills them again, and
// what the file wrote stays written.
func (s Scenario) MarshalYAML() (any, error) {
	type plain Scenario // drops this method, avoiding recursion
	var n yaml.Node
	if err := n.Encode(plain(s)); err != nil {
		return nil, err
	}
	if s.Profile == nil || n.Kind != yaml.MappingNode {
		return &n, nil
	}
	kept := n.Content[:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !s.Profile.sets(n.Content[i].Value) {
			kept = append(kept, n.Content[i], n.Content[i+1])
		}
	}
	n.Content = kept
	return &n, nil
}

// sets reports whether the profile filled key in.
func (p *Profile) sets(key string) bool { return p != nil && slices.Contains(p.Set, key) }

// ProfileSummary says what the profile resolved to, for the status page and
// `hubprobe run`, e.g. "signalr echo, unit 10 × 0.01: 100 connections,
// 100 senders, 2048-byte messages every 1s (connections written in the file)".
func (s Scenario) ProfileSummary() string {
	p := s.Profile
	if p == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s, unit %d × %g: %d connections, %d senders", p.Service, p.Scenario, p.Units, p.Scale,
		s.Connections, s.Senders)
	if s.Kind == "send_to_group" {
		fmt.Fprintf(&b, ", %d groups of %d", (s.Connections+s.GroupSize-1)/max(s.GroupSize, 1), s.GroupSize)
	}
	fmt.Fprintf(&b, ", %d-byte messages every %s", s.MessageSize, s.SendInterval)
	if len(p.Explicit) > 0 {
		fmt.Fprintf(&b, " (%s written in the file)", strings.Join(p.Explicit, ", "))
	}
	return b.String()
}

// profileService holds a profile to the tables of its target's service:
// another service's rows describe another wire.
func (v *validator) profileService(item string, s *Scenario, c *Config) error {
	t, ok := c.Target(s.Target)
	if !ok || s.Profile == nil || s.Profile.Service == t.TierService() {
		return nil
	}
	return v.Errorf(keyPath(keyPath(item, "profile"), "service"), "must be %s, the service of target %q, got %q", t.TierService(), t.Name, s.Profile.Service)
}

// tier checks a target's tier against the published tables and its service.
func (v *validator) tier(item string, t *Target) error {
	if t.Tier == nil {
		return nil
	}
	key := keyPath(item, "tier")
	if err := v.oneOf(keyPath(key, "service"), "service", t.Tier.Service, tiers.Services()); err != nil {
		return err
	}
	if t.Tier.Service != t.TierService() {
		return v.Errorf(keyPath(key, "service"), "must be %s, the target's service, got %q", t.TierService(), t.Tier.Service)
	}
	if _, err := tiers.Limits(t.Tier.Service, t.Tier.Units); err != nil {
		units, _ := tiers.Units(t.Tier.Service)
		return v.Errorf(keyPath(key, "units"), "%s has no published limits for %d units (units: %s)",
			t.Tier.Service, t.Tier.Units, strings.Trim(fmt.Sprint(units), "[]"))
	}
	return nil
}

// Limits returns the published limits of the tier; the tier was checked by
// Load, so only a Tier built by hand can fail here.
func (t Tier) Limits() (tiers.TierLimits, error) { return tiers.Limits(t.Service, t.Units) }

// CapacitySearchFor is the ramp a capacity search of the given size takes
// when its settings are left out: a tenth of the connections (at least 1)
// to start with and to add each step, so about ten steps.
func CapacitySearchFor(connections int) CapacitySearch {
	c := DefaultCapacitySearch
	c.BaseSending = max(1, connections/10)
	c.Step = c.BaseSending
	return c
}

// searchLength is the longest a capacity search's ramp can take: every step
// plus the second after each during which its last messages may still
// arrive within the 1 s limit.
func (c CapacitySearch) searchLength(connections int) time.Duration {
	return time.Duration(c.Steps(connections)) * (c.StepDuration + time.Second)
}
