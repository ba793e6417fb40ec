package tiers

import (
	"embed"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

// dataVersion is the only data file format this code reads, and
// bandwidthUnit the only unit its bandwidth columns may be in: the guides'
// formula in bytes per second (see the data files' header).
const (
	dataVersion   = 1
	bandwidthUnit = "bytes_per_second"
)

//go:embed data/*.yaml
var dataFS embed.FS

// fileSchema is one data file: one service's tables, as columns.
type fileSchema struct {
	Version           int              `yaml:"version"`
	BandwidthUnit     string           `yaml:"bandwidth_unit"`
	Service           string           `yaml:"service"`
	Source            string           `yaml:"source"`
	URL               string           `yaml:"url"`     // for readers of the file
	Edition           string           `yaml:"edition"` // for readers of the file
	PremiumAboveUnits int              `yaml:"premium_above_units"`
	Units             []int            `yaml:"units"`
	Scenarios         []scenarioSchema `yaml:"scenarios"`
}

// scenarioSchema is one table of the guide; every column has one entry per
// element of Units.
type scenarioSchema struct {
	Name         string        `yaml:"name"`
	Title        string        `yaml:"title"`
	Kind         string        `yaml:"kind"`
	Mode         string        `yaml:"mode"`
	Fanout       string        `yaml:"fanout"`
	RateCeiling  bool          `yaml:"rate_ceiling"`
	MessageSize  int64         `yaml:"message_size"`
	SendInterval time.Duration `yaml:"send_interval"`
	Caveat       string        `yaml:"caveat"`

	Units            []int            `yaml:"units"`
	Connections      []int64          `yaml:"connections"`
	GroupSize        []int64          `yaml:"group_size"`
	PrintedGroupSize []int64          `yaml:"printed_group_size"`
	GroupCount       []int64          `yaml:"group_count"`
	InboundMessages  []int64          `yaml:"inbound_messages_per_second"`
	OutboundMessages []int64          `yaml:"outbound_messages_per_second"`
	InboundBytes     []int64          `yaml:"inbound_bytes_per_second"`
	OutboundBytes    []int64          `yaml:"outbound_bytes_per_second"`
	PrintedInbound   []string         `yaml:"printed_inbound_bandwidth"`
	PrintedOutbound  []string         `yaml:"printed_outbound_bandwidth"`
	AppServers       appServersSchema `yaml:"app_servers"`
}

type appServersSchema struct {
	Units []int `yaml:"units"`
	Count []int `yaml:"count"`
}

// service is one decoded data file.
type service struct {
	name, source      string
	premiumAboveUnits int
	units             []int       // the tiers a plan chooses from
	scenarios         []*scenario // in file order
}

// scenario is one decoded table with its rows sorted by units.
type scenario struct {
	name, title, kind, mode, fanout string
	rateCeiling                     bool
	caveat                          string
	rows                            []TableRow
	appServers                      map[int]int
}

// catalogue holds every service's tables, decoded once.
var catalogue = sync.OnceValues(loadCatalogue)

func loadCatalogue() (map[string]*service, error) {
	names, err := dataFS.ReadDir("data")
	if err != nil {
		return nil, err
	}
	out := map[string]*service{}
	for _, e := range names {
		file := path.Join("data", e.Name())
		raw, err := dataFS.ReadFile(file)
		if err != nil {
			return nil, err
		}
		svc, err := decodeService(raw, file)
		if err != nil {
			return nil, fmt.Errorf("tiers: %w", err)
		}
		out[svc.name] = svc
	}
	return out, nil
}

// decodeService decodes the data file named file strictly, as the
// configuration is decoded: unknown keys, a second document or a wrongly
// typed value (a float where a count belongs) are errors, never silently
// dropped. Every error is a *yamldecode.Error naming file, line and key.
func decodeService(raw []byte, file string) (*service, error) {
	d := yamldecode.New(file)
	var f fileSchema
	if _, err := d.Decode(raw, &f); err != nil {
		return nil, err
	}
	if err := f.check(d, file); err != nil {
		return nil, err
	}
	svc := &service{
		name: f.Service, source: f.Source, premiumAboveUnits: f.PremiumAboveUnits, units: f.Units,
	}
	for i := range f.Scenarios {
		key := yamldecode.IndexPath("scenarios", i)
		sc, err := buildScenario(f.Service, &f.Scenarios[i])
		if err != nil {
			return nil, d.Errorf(key, "%s", err)
		}
		if svc.scenario(sc.name) != nil {
			return nil, d.Errorf(yamldecode.KeyPath(key, "name"), "scenario %q appears twice", sc.name)
		}
		if missing := sc.missing(svc.units); len(missing) > 0 && !sc.rateCeiling {
			return nil, d.Errorf(yamldecode.KeyPath(key, "units"), "scenario %q has no column for units %v", sc.name, missing)
		}
		svc.scenarios = append(svc.scenarios, sc)
	}
	if err := svc.checkKinds(); err != nil {
		return nil, d.Errorf("scenarios", "%s", err)
	}
	return svc, nil
}

// check validates the header of a data file: the format, the unit and the
// service, which must match the file's name.
func (f *fileSchema) check(d *yamldecode.Decoder, file string) error {
	switch {
	case f.Version != dataVersion:
		return d.Errorf("version", "%d is not supported (want %d)", f.Version, dataVersion)
	case f.BandwidthUnit != bandwidthUnit:
		return d.Errorf("bandwidth_unit", "%q is not supported (want %q)", f.BandwidthUnit, bandwidthUnit)
	case f.Service == "" || f.Source == "" || len(f.Scenarios) == 0 || len(f.Units) == 0:
		return d.Errorf("", "service, source, units and scenarios are required")
	case f.Service != strings.TrimSuffix(path.Base(file), ".yaml"):
		return d.Errorf("service", "%q does not match the file name", f.Service)
	}
	return nil
}

func buildScenario(serviceName string, s *scenarioSchema) (*scenario, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	sc := &scenario{
		name: s.Name, title: s.Title, kind: s.Kind, mode: s.Mode, fanout: s.Fanout,
		rateCeiling: s.RateCeiling, caveat: s.Caveat, appServers: map[int]int{},
	}
	for i, u := range s.AppServers.Units {
		sc.appServers[u] = s.AppServers.Count[i]
	}
	for i, u := range s.Units {
		r := TableRow{
			Service: serviceName, Scenario: s.Name, Units: u,
			Connections:               s.Connections[i],
			InboundMessagesPerSecond:  s.InboundMessages[i],
			OutboundMessagesPerSecond: s.OutboundMessages[i],
			InboundBytesPerSecond:     s.InboundBytes[i],
			OutboundBytesPerSecond:    s.OutboundBytes[i],
			MessageSize:               s.MessageSize,
			SendInterval:              s.SendInterval,
			AppServers:                sc.appServers[u],
			Printed:                   Printed{InboundBandwidth: s.PrintedInbound[i], OutboundBandwidth: s.PrintedOutbound[i]},
		}
		r.Senders = int64(float64(r.InboundMessagesPerSecond) * s.SendInterval.Seconds())
		if s.GroupSize != nil {
			r.GroupSize, r.GroupCount = s.GroupSize[i], s.GroupCount[i]
			r.Printed.GroupSize = r.GroupSize
		}
		if s.PrintedGroupSize != nil {
			r.Printed.GroupSize = s.PrintedGroupSize[i]
		}
		sc.rows = append(sc.rows, r)
	}
	return sc, nil
}

var (
	knownFanouts = []string{fanoutOne, fanoutAll, fanoutGroup}
	knownKinds   = []string{KindEcho, KindBroadcast, KindSendToGroup, KindSendToConnection, KindRESTBroadcast, KindRESTSendToUser, KindUpstreamEcho}
)

// check validates the shape of one table: the values themselves are checked
// against the guide's formulas by the package tests.
func (s *scenarioSchema) check() error {
	switch {
	case s.Name == "" || s.Title == "" || s.Mode == "":
		return errors.New("name, title and mode are required")
	case !slices.Contains(knownKinds, s.Kind):
		return fmt.Errorf("unknown kind %q", s.Kind)
	case !slices.Contains(knownFanouts, s.Fanout):
		return fmt.Errorf("unknown fanout %q", s.Fanout)
	case s.MessageSize <= 0 || s.SendInterval <= 0:
		return errors.New("message_size and send_interval must be positive")
	case len(s.Units) == 0 || !slices.IsSorted(s.Units) || len(slices.Compact(slices.Clone(s.Units))) != len(s.Units):
		return errors.New("units must be a non-empty ascending list without repeats")
	case (s.Fanout == fanoutGroup) != (s.GroupSize != nil && s.GroupCount != nil):
		return errors.New("group_size and group_count are required for, and only for, fanout group")
	case len(s.AppServers.Units) != len(s.AppServers.Count):
		return errors.New("app_servers units and count differ in length")
	}
	return s.checkColumns()
}

func (s *scenarioSchema) checkColumns() error {
	n := len(s.Units)
	columns := map[string]int{
		"connections": len(s.Connections), "inbound_messages_per_second": len(s.InboundMessages),
		"outbound_messages_per_second": len(s.OutboundMessages), "inbound_bytes_per_second": len(s.InboundBytes),
		"outbound_bytes_per_second": len(s.OutboundBytes), "printed_inbound_bandwidth": len(s.PrintedInbound),
		"printed_outbound_bandwidth": len(s.PrintedOutbound),
	}
	optional := map[string][]int64{"group_size": s.GroupSize, "group_count": s.GroupCount, "printed_group_size": s.PrintedGroupSize}
	for name, col := range optional {
		if col != nil {
			columns[name] = len(col)
		}
	}
	for name, got := range columns {
		if got != n {
			return fmt.Errorf("%s has %d entries for %d units", name, got, n)
		}
	}
	for _, col := range [][]int64{s.Connections, s.InboundMessages, s.OutboundMessages, s.InboundBytes, s.OutboundBytes} {
		if slices.Min(col) <= 0 {
			return errors.New("connections, messages and bytes per second must be positive")
		}
	}
	return nil
}

// checkKinds makes sure every workload kind maps to one table, and
// send_to_group to exactly the small- and big-group tables.
func (s *service) checkKinds() error {
	for _, kind := range s.kinds() {
		var names []string
		for _, sc := range s.scenarios {
			if sc.kind == kind {
				names = append(names, sc.name)
			}
		}
		slices.Sort(names)
		want := len(names) == 1
		if kind == KindSendToGroup {
			want = slices.Equal(names, []string{TableBigGroup, TableSmallGroup})
		}
		if !want {
			return fmt.Errorf("kind %q maps to tables %v", kind, names)
		}
	}
	return nil
}

func (s *service) scenario(name string) *scenario {
	for _, sc := range s.scenarios {
		if sc.name == name {
			return sc
		}
	}
	return nil
}

// missing lists the units of ladder the table has no column for.
func (sc *scenario) missing(ladder []int) []int {
	var out []int
	for _, u := range ladder {
		if _, ok := sc.row(u); !ok {
			out = append(out, u)
		}
	}
	return out
}

func (sc *scenario) row(units int) (TableRow, bool) {
	i := slices.IndexFunc(sc.rows, func(r TableRow) bool { return r.Units == units })
	if i < 0 {
		return TableRow{}, false
	}
	return sc.rows[i], true
}
