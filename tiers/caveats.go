package tiers

import (
	"fmt"
	"slices"
	"strings"
)

// routingUnits is where the guides warn that routing cost leaves Server Load:
// from unit 50, mostly sending to small groups or single connections.
const routingUnits = 50

// caveats lists what the tables alone do not say about this plan: the
// guides' notes on the tables used, and the assumptions the plan made.
func (p *planner) caveats(r Recommendation) []string {
	var out []string
	add := func(format string, args ...any) {
		if s := fmt.Sprintf(format, args...); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if !r.Fits {
		add("no tier in the %s holds this workload at %.0f %%: split it across instances or ask the vendor", p.svc.source, 100*r.MaxLoad)
	}
	if p.svc.premiumAboveUnits > 0 && r.Units > p.svc.premiumAboveUnits {
		add("unit sizes above %d need the Premium_P2 SKU", p.svc.premiumAboveUnits)
	}
	if r.Units >= routingUnits && p.routingHeavy() {
		add("from unit %d, the routing cost of small groups and single-connection sends is not part of Server Load: watch the message-rate limits, not only Server Load", routingUnits)
	}
	for _, sc := range p.tables {
		if sc.caveat != "" {
			add("%s: %s", sc.name, sc.caveat)
		}
	}
	if small := p.smallMessages(); len(small) > 0 {
		add("messages under %d bytes are counted as %d bytes (the guides' rule): %s", MinCountedMessageSize, MinCountedMessageSize, strings.Join(small, ", "))
	}
	for _, c := range r.Checks {
		if c.Interpolated {
			add("%s: the table has no unit %d column; the capacity is interpolated between its neighbouring columns", c.Limit, r.Units)
		}
	}
	if r.AppServers > 0 {
		add("app server counts are the guide's suggestions for a tier loaded by that one scenario; measure a mix")
	}
	return out
}

// routingHeavy reports whether the workload sends to small groups or single
// connections, whose routing cost the guides single out.
func (p *planner) routingHeavy() bool {
	for _, sc := range p.tables {
		if sc.name == TableSmallGroup || sc.kind == KindSendToConnection {
			return true
		}
	}
	return false
}

func (p *planner) smallMessages() []string {
	var names []string
	for _, d := range p.demands {
		if d.MessageSize < MinCountedMessageSize {
			names = append(names, d.Name)
		}
	}
	return names
}
