package tiers

import (
	"slices"
)

// Names of the limits every plan checks; rate-ceiling tables add
// "<table> inbound messages/s" and, for groups, "<table> outbound messages/s".
const (
	LimitInbound     = "inbound bandwidth"
	LimitOutbound    = "outbound bandwidth"
	LimitConnections = "connections"
)

// Quantities a Check measures.
const (
	QuantityBytesPerSecond    = "bytes_per_second"
	QuantityMessagesPerSecond = "messages_per_second"
	QuantityConnections       = "connections"
)

// fitTolerance absorbs float rounding when a demand sits exactly on a limit.
const fitTolerance = 1e-9

// Recommendation is the outcome of Plan: the demand of each scenario, the
// tier chosen and how each limit fares on it.
type Recommendation struct {
	Service   string           `json:"service"`
	Source    string           `json:"source"`
	MaxLoad   float64          `json:"max_load"`
	Scenarios []ScenarioDemand `json:"scenarios"`
	Total     Demand           `json:"total"`

	// Fits is false when no tier in the guide holds the workload; Units is
	// then the largest tier and Checks show by how much it falls short.
	Fits  bool `json:"fits"`
	Units int  `json:"units"`
	// Deciding is the limit that set the tier: the most loaded one on
	// DecidingUnits, the next smaller tier (or on Units when that is the
	// smallest tier or nothing fits).
	Deciding            string  `json:"deciding_limit"`
	DecidingUnits       int     `json:"deciding_units"`
	DecidingUtilization float64 `json:"deciding_utilization"`
	Checks              []Check `json:"checks"`

	// AppServers is the largest of the per-scenario suggestions; zero when
	// the guide gives none (serverless and Web PubSub).
	AppServers int      `json:"app_servers"`
	Caveats    []string `json:"caveats"`
}

// ScenarioDemand is one workload scenario turned into the guide's formulas.
type ScenarioDemand struct {
	Name                string  `json:"name"`
	Kind                string  `json:"kind"`
	Table               string  `json:"table"` // the guide's table it is planned with
	Connections         int64   `json:"connections"`
	Senders             int64   `json:"senders"`
	ReceiversPerMessage float64 `json:"receivers_per_message"`
	MessageSize         int64   `json:"message_size_bytes"`
	CountedMessageSize  int64   `json:"counted_message_size_bytes"` // at least 1,024
	SendIntervalSeconds float64 `json:"send_interval_seconds"`
	Rates
	// AppServers is the guide's suggestion for this table at the chosen
	// tier; zero when it gives none.
	AppServers int `json:"app_servers,omitempty"`
}

// Rates are message and byte rates in one direction each.
type Rates struct {
	InboundMessagesPerSecond  float64 `json:"inbound_messages_per_second"`
	OutboundMessagesPerSecond float64 `json:"outbound_messages_per_second"`
	InboundBytesPerSecond     float64 `json:"inbound_bytes_per_second"`
	OutboundBytesPerSecond    float64 `json:"outbound_bytes_per_second"`
}

// Demand is the whole workload: summed rates and distinct connections.
type Demand struct {
	Connections int64 `json:"connections"`
	Rates
}

// Check is one limit on one tier.
type Check struct {
	Limit    string  `json:"limit"`
	Quantity string  `json:"quantity"`
	Demand   float64 `json:"demand"`
	Capacity float64 `json:"capacity"`
	// Utilization is Demand / Capacity; the tier holds when it is at most
	// the plan's MaxLoad.
	Utilization float64 `json:"utilization"`
	// Headroom is Capacity × MaxLoad − Demand: what is left before the
	// limit, negative when over.
	Headroom float64 `json:"headroom"`
	// Interpolated marks a capacity read between two columns of a table
	// that has no column for this tier.
	Interpolated bool `json:"interpolated,omitempty"`
}

// Plan applies the guides' method to w: split into basic scenarios, compute
// inbound and outbound bandwidth with the formula (messages under 1,024 bytes
// count as 1,024 bytes), sum, and pick the smallest tier on which every limit
// stays at or under MaxLoad. Besides connections and bandwidth, scenarios
// whose cost is routing or HTTP rather than bytes (small groups, send to
// connection, REST send to user, upstream echo) are held to their own
// table's message rates. Invalid workloads return a *FieldError.
func Plan(w Workload) (Recommendation, error) {
	w = w.withDefaults()
	svc, err := lookupService(w.Service)
	if err != nil {
		return Recommendation{}, &FieldError{Path: "service", Msg: err.Error()}
	}
	if ferr := w.validate(svc); ferr != nil {
		return Recommendation{}, ferr
	}
	p := newPlanner(svc, w)
	return p.recommend(), nil
}

// planner holds a validated workload turned into demands.
type planner struct {
	svc     *service
	w       Workload
	demands []ScenarioDemand
	tables  []*scenario // the table of each demand
	total   Demand
}

func newPlanner(svc *service, w Workload) *planner {
	p := &planner{svc: svc, w: w}
	for _, l := range w.Scenarios {
		sc := l.table(svc)
		d := demandOf(l, sc)
		p.demands = append(p.demands, d)
		p.tables = append(p.tables, sc)
		p.total.Connections += d.Connections
		p.total.InboundMessagesPerSecond += d.InboundMessagesPerSecond
		p.total.OutboundMessagesPerSecond += d.OutboundMessagesPerSecond
		p.total.InboundBytesPerSecond += d.InboundBytesPerSecond
		p.total.OutboundBytesPerSecond += d.OutboundBytesPerSecond
	}
	if w.Connections > 0 {
		p.total.Connections = w.Connections
	}
	return p
}

// demandOf applies bandwidth = connections × message size / send interval
// in each direction: senders for inbound, their receivers for outbound.
func demandOf(l Load, sc *scenario) ScenarioDemand {
	size := int64(l.MessageSize)
	counted := max(size, MinCountedMessageSize)
	receivers := l.receivers(sc.fanout)
	in := float64(l.Senders) / l.SendInterval.Seconds()
	return ScenarioDemand{
		Name: l.Name, Kind: l.Kind, Table: sc.name,
		Connections: l.Connections, Senders: l.Senders, ReceiversPerMessage: receivers,
		MessageSize: size, CountedMessageSize: counted,
		SendIntervalSeconds: l.SendInterval.Seconds(),
		Rates: Rates{
			InboundMessagesPerSecond:  in,
			OutboundMessagesPerSecond: in * receivers,
			InboundBytesPerSecond:     in * float64(counted),
			OutboundBytesPerSecond:    in * receivers * float64(counted),
		},
	}
}

// recommend walks the tiers from the smallest and stops at the first on
// which every check holds.
func (p *planner) recommend() Recommendation {
	var below []Check
	belowUnits := 0
	for _, u := range p.svc.units {
		checks := p.checks(u)
		if p.holds(checks) {
			return p.result(u, true, checks, below, belowUnits)
		}
		below, belowUnits = checks, u
	}
	return p.result(belowUnits, false, below, nil, 0)
}

func (p *planner) holds(checks []Check) bool {
	for _, c := range checks {
		if c.Utilization > p.w.MaxLoad*(1+fitTolerance) {
			return false
		}
	}
	return true
}

func (p *planner) result(units int, fits bool, checks, below []Check, belowUnits int) Recommendation {
	r := Recommendation{
		Service: p.svc.name, Source: p.svc.source, MaxLoad: p.w.MaxLoad,
		Scenarios: slices.Clone(p.demands), Total: p.total,
		Fits: fits, Units: units, Checks: checks,
	}
	decidingOn, decidingUnits := checks, units
	if below != nil {
		decidingOn, decidingUnits = below, belowUnits
	}
	worst := mostLoaded(decidingOn)
	r.Deciding, r.DecidingUnits, r.DecidingUtilization = worst.Limit, decidingUnits, worst.Utilization
	for i := range r.Scenarios {
		r.Scenarios[i].AppServers = p.tables[i].appServers[units]
		r.AppServers = max(r.AppServers, r.Scenarios[i].AppServers)
	}
	r.Caveats = p.caveats(r)
	return r
}

// mostLoaded returns the check with the highest utilization; on a tie the
// earlier one wins, so bandwidth (the guides' method) decides before rate
// ceilings, and those before connections.
func mostLoaded(checks []Check) Check {
	worst := checks[0]
	for _, c := range checks[1:] {
		if c.Utilization > worst.Utilization*(1+fitTolerance) {
			worst = c
		}
	}
	return worst
}

// checks evaluates every limit on one tier, in tie-break order.
func (p *planner) checks(units int) []Check {
	lim := p.svc.limits(units)
	out := []Check{
		p.check(LimitInbound, QuantityBytesPerSecond, p.total.InboundBytesPerSecond, float64(lim.InboundBytesPerSecond)),
		p.check(LimitOutbound, QuantityBytesPerSecond, p.total.OutboundBytesPerSecond, float64(lim.OutboundBytesPerSecond)),
	}
	out = append(out, p.ceilingChecks(units)...)
	return append(out, p.check(LimitConnections, QuantityConnections, float64(p.total.Connections), float64(lim.Connections)))
}

func (p *planner) check(limit, quantity string, demand, capacity float64) Check {
	return Check{
		Limit: limit, Quantity: quantity, Demand: demand, Capacity: capacity,
		Utilization: demand / capacity, Headroom: capacity*p.w.MaxLoad - demand,
	}
}

// ceilingChecks holds each rate-limited table's summed demand to the
// message rates the guide measured for it on this tier.
func (p *planner) ceilingChecks(units int) []Check {
	var out []Check
	var done []*scenario
	for _, sc := range p.tables {
		if !sc.rateCeiling || slices.Contains(done, sc) {
			continue
		}
		done = append(done, sc)
		var in, outMsgs float64
		for i, t := range p.tables {
			if t == sc {
				in += p.demands[i].InboundMessagesPerSecond
				outMsgs += p.demands[i].OutboundMessagesPerSecond
			}
		}
		row, interpolated := sc.rowAt(units)
		c := p.check(sc.name+" inbound messages/s", QuantityMessagesPerSecond, in, row.in)
		c.Interpolated = interpolated
		out = append(out, c)
		if sc.fanout != fanoutOne { // otherwise outbound equals inbound
			c = p.check(sc.name+" outbound messages/s", QuantityMessagesPerSecond, outMsgs, row.out)
			c.Interpolated = interpolated
			out = append(out, c)
		}
	}
	return out
}

// messageRates is a table's message rates on one tier.
type messageRates struct{ in, out float64 }

// rowAt returns the table's message rates on a tier, interpolating linearly
// between its neighbouring columns when the table has none for it (send to
// connection lists unit 20 where the other tables list unit 10).
func (sc *scenario) rowAt(units int) (messageRates, bool) {
	if r, ok := sc.row(units); ok {
		return messageRates{float64(r.InboundMessagesPerSecond), float64(r.OutboundMessagesPerSecond)}, false
	}
	i, _ := slices.BinarySearchFunc(sc.rows, units, func(r TableRow, u int) int { return r.Units - u })
	switch {
	case i == 0: // below the first column: scale it down
		return scaleRates(sc.rows[0], float64(units)/float64(sc.rows[0].Units)), true
	case i == len(sc.rows): // past the last column: no more than it
		return scaleRates(sc.rows[i-1], 1), true
	}
	lo, hi := sc.rows[i-1], sc.rows[i]
	f := float64(units-lo.Units) / float64(hi.Units-lo.Units)
	a, b := scaleRates(lo, 1), scaleRates(hi, 1)
	return messageRates{a.in + f*(b.in-a.in), a.out + f*(b.out-a.out)}, true
}

func scaleRates(r TableRow, f float64) messageRates {
	return messageRates{float64(r.InboundMessagesPerSecond) * f, float64(r.OutboundMessagesPerSecond) * f}
}
