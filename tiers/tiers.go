// Package tiers holds the vendors' published capacity tables for Azure
// SignalR Service and Azure Web PubSub ("Performance guide for Azure SignalR
// Service", "Performance guide for Azure Web PubSub Service") as versioned
// data compiled into the binary, and plans which tier a workload needs with
// the guides' own method: split the workload into basic scenarios, compute
// inbound and outbound bandwidth with the guides' formula, sum, and pick the
// smallest tier whose limits hold at 70 % load.
//
// Every bandwidth in this package is in bytes per second and follows the
// guides' formula bandwidth = connections × message size / send interval;
// docs/tiers.md explains why the printed cells are read as bytes.
package tiers

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Service names, as used in data files and workloads.
const (
	SignalR   = "signalr"
	WebPubSub = "webpubsub"
)

// Errors returned (wrapped) by the lookups.
var (
	ErrUnknownService  = errors.New("unknown service")
	ErrUnknownScenario = errors.New("unknown scenario")
	ErrUnknownTier     = errors.New("no table row for this unit size")
)

// TableRow is one column of one of the guides' tables: the maximum a scenario
// reached on one tier with 99 % of messages under one second.
type TableRow struct {
	Service  string `json:"service"`
	Scenario string `json:"scenario"`
	Units    int    `json:"units"`

	Connections int64 `json:"connections"`
	// Senders is how many connections (or REST callers) sent concurrently:
	// inbound messages per second × send interval.
	Senders                   int64 `json:"senders"`
	InboundMessagesPerSecond  int64 `json:"inbound_messages_per_second"`
	OutboundMessagesPerSecond int64 `json:"outbound_messages_per_second"`
	InboundBytesPerSecond     int64 `json:"inbound_bytes_per_second"`
	OutboundBytesPerSecond    int64 `json:"outbound_bytes_per_second"`

	MessageSize  int64         `json:"message_size_bytes"`
	SendInterval time.Duration `json:"send_interval_ns"`
	// GroupSize is the receivers of one group message and GroupCount the
	// number of groups; both are zero outside group scenarios.
	GroupSize  int64 `json:"group_size,omitempty"`
	GroupCount int64 `json:"group_count,omitempty"`
	// AppServers is the guide's suggested app server count for this tier;
	// zero when the guide gives none (serverless, Web PubSub, or no column).
	AppServers int `json:"app_servers,omitempty"`

	Printed Printed `json:"printed"`
}

// Printed keeps cells as the guide prints them where they differ in unit or
// value from the normalised fields.
type Printed struct {
	InboundBandwidth  string `json:"inbound_bandwidth"`
	OutboundBandwidth string `json:"outbound_bandwidth"`
	GroupSize         int64  `json:"group_size,omitempty"`
}

// TierLimits is what one tier of a service holds: for each quantity, the largest
// figure any of the guide's tables reaches on that tier (echo sets inbound
// bandwidth, broadcast and big groups set outbound bandwidth).
type TierLimits struct {
	Service                   string `json:"service"`
	Units                     int    `json:"units"`
	Connections               int64  `json:"connections"`
	InboundBytesPerSecond     int64  `json:"inbound_bytes_per_second"`
	OutboundBytesPerSecond    int64  `json:"outbound_bytes_per_second"`
	InboundMessagesPerSecond  int64  `json:"inbound_messages_per_second"`
	OutboundMessagesPerSecond int64  `json:"outbound_messages_per_second"`
	// InboundFrom and OutboundFrom name the tables that set the bandwidths.
	InboundFrom  string `json:"inbound_from"`
	OutboundFrom string `json:"outbound_from"`
}

// Services lists the services that have tables, sorted.
func Services() []string {
	cat, err := catalogue()
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(cat))
	for name := range cat {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Source names the public document a service's tables come from.
func Source(serviceName string) (string, error) {
	svc, err := lookupService(serviceName)
	if err != nil {
		return "", err
	}
	return svc.source, nil
}

// Scenarios lists a service's table names in the guide's order.
func Scenarios(serviceName string) ([]string, error) {
	svc, err := lookupService(serviceName)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(svc.scenarios))
	for i, sc := range svc.scenarios {
		names[i] = sc.name
	}
	return names, nil
}

// Units lists the unit sizes for which Limits is defined and among which
// Plan chooses, ascending.
func Units(serviceName string) ([]int, error) {
	svc, err := lookupService(serviceName)
	if err != nil {
		return nil, err
	}
	return svc.ladder(), nil
}

// Row returns one column of one table, for example
// Row("signalr", "echo", 1) for unit 1 echo.
func Row(serviceName, scenarioName string, units int) (TableRow, error) {
	svc, err := lookupService(serviceName)
	if err != nil {
		return TableRow{}, err
	}
	sc := svc.scenario(scenarioName)
	if sc == nil {
		return TableRow{}, fmt.Errorf("%w %q for %s", ErrUnknownScenario, scenarioName, serviceName)
	}
	r, ok := sc.row(units)
	if !ok {
		return TableRow{}, fmt.Errorf("%w: %s %s unit %d (the table has units %v)", ErrUnknownTier, serviceName, scenarioName, units, sc.units())
	}
	return r, nil
}

// Limits returns what one tier of a service holds. Only the unit sizes the
// guide's tables list are known (see Units); others return ErrUnknownTier.
func Limits(serviceName string, units int) (TierLimits, error) {
	svc, err := lookupService(serviceName)
	if err != nil {
		return TierLimits{}, err
	}
	if !slices.Contains(svc.ladder(), units) {
		return TierLimits{}, fmt.Errorf("%w: %s unit %d (known units %v)", ErrUnknownTier, serviceName, units, svc.ladder())
	}
	return svc.limits(units), nil
}

func lookupService(name string) (*service, error) {
	cat, err := catalogue()
	if err != nil {
		return nil, err
	}
	svc, ok := cat[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %v)", ErrUnknownService, name, Services())
	}
	return svc, nil
}

// ladder is the tiers a plan chooses from, ascending.
func (s *service) ladder() []int { return slices.Clone(s.units) }

// limits folds every table's row at units into the tier's maxima. Tables
// without a row at units (send to connection at unit 10) are skipped: the
// others still cover the bandwidths and connections.
func (s *service) limits(units int) TierLimits {
	l := TierLimits{Service: s.name, Units: units}
	for _, sc := range s.scenarios {
		r, ok := sc.row(units)
		if !ok {
			continue
		}
		l.Connections = max(l.Connections, r.Connections)
		l.InboundMessagesPerSecond = max(l.InboundMessagesPerSecond, r.InboundMessagesPerSecond)
		l.OutboundMessagesPerSecond = max(l.OutboundMessagesPerSecond, r.OutboundMessagesPerSecond)
		if r.InboundBytesPerSecond > l.InboundBytesPerSecond {
			l.InboundBytesPerSecond, l.InboundFrom = r.InboundBytesPerSecond, sc.name
		}
		if r.OutboundBytesPerSecond > l.OutboundBytesPerSecond {
			l.OutboundBytesPerSecond, l.OutboundFrom = r.OutboundBytesPerSecond, sc.name
		}
	}
	return l
}

func (sc *scenario) units() []int {
	out := make([]int, len(sc.rows))
	for i, r := range sc.rows {
		out[i] = r.Units
	}
	return out
}
