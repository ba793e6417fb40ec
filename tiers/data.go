package tiers

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
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
		svc, err := decodeService(raw)
		if err != nil {
			return nil, fmt.Errorf("tiers: %s: %w", file, err)
		}
		if want := strings.TrimSuffix(e.Name(), ".yaml"); svc.name != want {
			return nil, fmt.Errorf("tiers: %s: service %q does not match the file name", file, svc.name)
		}
		out[svc.name] = svc
	}
	return out, nil
}

// decodeService decodes one data file strictly: unknown keys, a second
// document or a wrongly typed value are errors, never silently dropped.
func decodeService(raw []byte) (*service, error) {
	if err := rejectFloats(raw); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var f fileSchema
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if err := dec.Decode(new(any)); !errors.Is(err, io.EOF) {
		return nil, errors.New("only one YAML document is allowed")
	}
	if f.Version != dataVersion {
		return nil, fmt.Errorf("version %d is not supported (want %d)", f.Version, dataVersion)
	}
	if f.BandwidthUnit != bandwidthUnit {
		return nil, fmt.Errorf("bandwidth_unit %q is not supported (want %q)", f.BandwidthUnit, bandwidthUnit)
	}
	if f.Service == "" || f.Source == "" || len(f.Scenarios) == 0 || len(f.Units) == 0 {
		return nil, errors.New("service, source, units and scenarios are required")
	}
	svc := &service{
		name: f.Service, source: f.Source, premiumAboveUnits: f.PremiumAboveUnits, units: f.Units,
	}
	for i := range f.Scenarios {
		sc, err := buildScenario(f.Service, &f.Scenarios[i])
		if err != nil {
			return nil, fmt.Errorf("scenarios[%d] (%s): %w", i, f.Scenarios[i].Name, err)
		}
		if svc.scenario(sc.name) != nil {
			return nil, fmt.Errorf("scenario %q appears twice", sc.name)
		}
		if missing := sc.missing(svc.units); len(missing) > 0 && !sc.rateCeiling {
			return nil, fmt.Errorf("scenario %q has no column for units %v", sc.name, missing)
		}
		svc.scenarios = append(svc.scenarios, sc)
	}
	return svc, svc.checkKinds()
}

// rejectFloats fails on any float scalar: the data holds only whole numbers,
// and yaml.v3 would silently truncate 2.5 into an integer field.
func rejectFloats(raw []byte) error {
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		return err
	}
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
			return fmt.Errorf("line %d: %q is not a whole number", n.Line, n.Value)
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(&root)
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
			want = slices.Equal(names, []string{tableBigGroup, tableSmallGroup})
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
