package tiers

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// workedExample is the SignalR guide's own example: broadcast of 20 KB
// messages from one sender to 100,000 connections every 5 seconds, which
// the guide says matches unit 100's maximum outbound bandwidth.
func workedExample(maxLoad float64) Workload {
	return Workload{Service: SignalR, MaxLoad: maxLoad, Scenarios: []Load{{
		Name: "ticker", Kind: KindBroadcast, Connections: 100000, Senders: 1,
		MessageSize: 20 << 10, SendInterval: 5 * time.Second,
	}}}
}

// maxReceivers inverts the formula as the guide's worked example does:
// outboundConnections = outboundBandwidth × sendInterval / messageSize.
func maxReceivers(outboundBytesPerSecond int64, sendIntervalSeconds float64, messageSize int64) int64 {
	counted := max(messageSize, MinCountedMessageSize)
	return int64(math.Floor(float64(outboundBytesPerSecond) * sendIntervalSeconds / float64(counted)))
}

// checksOn is what the planner finds of w on one tier of its service,
// without choosing one.
func checksOn(t *testing.T, w Workload, units int) []Check {
	t.Helper()
	w = w.withDefaults()
	svc, err := lookupService(w.Service)
	if err != nil {
		t.Fatal(err)
	}
	if ferr := w.validate(svc); ferr != nil {
		t.Fatal(ferr)
	}
	if !slices.Contains(svc.units, units) {
		t.Fatalf("%s has no unit %d", w.Service, units)
	}
	return newPlanner(svc, w).checks(units)
}

func TestPlanWorkedExample(t *testing.T) {
	// The guide: 400 MB × 5 / 20 KB = 100,000 connections on unit 100. With
	// the formula in bytes, unit 100 carries 200,000 × 2,048 B/s.
	lim, err := Limits(SignalR, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := maxReceivers(lim.OutboundBytesPerSecond, 5, 20<<10); got != 100000 {
		t.Errorf("unit 100 receivers of 20 KiB every 5 s = %d, want the guide's 100,000", got)
	}
	// The guide's second row (256 KB, 8,000 connections) is the same limit, rounded.
	if got := maxReceivers(lim.OutboundBytesPerSecond, 5, 256<<10); got < 7800 || got > 8000 {
		t.Errorf("unit 100 receivers of 256 KiB every 5 s = %d, want about the guide's 8,000", got)
	}

	full, err := Plan(workedExample(1))
	if err != nil {
		t.Fatal(err)
	}
	if !full.Fits || full.Units != 100 || full.Deciding != LimitOutbound || full.DecidingUnits != 50 {
		t.Errorf("at 100 %% load: unit %d (fits %v), deciding %q on unit %d; want unit 100, outbound bandwidth ruling out unit 50",
			full.Units, full.Fits, full.Deciding, full.DecidingUnits)
	}
	if c := findCheck(t, full.Checks, LimitOutbound); c.Utilization != 1 || c.Headroom != 0 {
		t.Errorf("unit 100 outbound at 100 %% load: %+v, want utilization exactly 1 and no headroom", c)
	}

	r, err := Plan(workedExample(0))
	if err != nil {
		t.Fatal(err)
	}
	d := r.Scenarios[0]
	if d.InboundBytesPerSecond != 4096 || d.OutboundBytesPerSecond != 409600000 || d.OutboundMessagesPerSecond != 20000 {
		t.Errorf("demand in %.0f B/s, out %.0f B/s, %.0f msg/s; want 4096, 409600000, 20000", d.InboundBytesPerSecond, d.OutboundBytesPerSecond, d.OutboundMessagesPerSecond)
	}
	if r.MaxLoad != 0.7 || !r.Fits || r.Units != 200 || r.Deciding != LimitOutbound || r.DecidingUnits != 100 || r.DecidingUtilization != 1 {
		t.Errorf("at 70 %%: unit %d, deciding %q on unit %d at %.3f; want unit 200, outbound bandwidth on unit 100 at 1.000",
			r.Units, r.Deciding, r.DecidingUnits, r.DecidingUtilization)
	}
	out := findCheck(t, r.Checks, LimitOutbound)
	if out.Capacity != 819200000 || out.Utilization != 0.5 || out.Headroom != 0.7*819200000-409600000 {
		t.Errorf("unit 200 outbound check = %+v", out)
	}
	if r.AppServers != 4 || d.AppServers != 4 {
		t.Errorf("app servers %d / %d, want the guide's 4 for broadcast at unit 200", r.AppServers, d.AppServers)
	}
	wantCaveat(t, r, "Premium_P2")
	wantCaveat(t, r, "from 5 to 40")
}

// TestPlanAgainstTableRows: a workload equal to a table row at 70 % fits
// that row's tier; at 100 % it sits exactly on a limit there, so the plan
// moves up and names the limit.
func TestPlanAgainstTableRows(t *testing.T) {
	cat, err := catalogue()
	if err != nil {
		t.Fatal(err)
	}
	tested := 0
	for _, svc := range cat {
		for _, sc := range svc.scenarios {
			for _, row := range sc.rows {
				if !slices.Contains(svc.units, row.Units) {
					continue // send to connection's unit 20 is not a tier to plan on
				}
				checkRowAt(t, sc, row, 0.7)
				checkRowAt(t, sc, row, 1.0)
				tested++
			}
		}
	}
	if tested != 12*8-1 {
		t.Errorf("tested %d rows, want %d", tested, 12*8-1)
	}
}

func checkRowAt(t *testing.T, sc *scenario, row TableRow, f float64) {
	t.Helper()
	w := Workload{Service: row.Service, Scenarios: []Load{rowLoad(sc, row, f)}}
	name := row.Service + " " + row.Scenario + " unit " + itoa(row.Units)
	r, err := Plan(w)
	if err != nil {
		t.Fatalf("%s at %.0f %%: %v", name, 100*f, err)
	}
	checks := checksOn(t, w, row.Units)
	worst := mostLoaded(checks)
	if math.Abs(worst.Utilization-f) > 1e-9 {
		t.Errorf("%s at %.0f %%: most loaded limit on its own tier is %q at %.4f", name, 100*f, worst.Limit, worst.Utilization)
	}
	switch {
	case f < 1 && (!r.Fits || r.Units != row.Units):
		t.Errorf("%s at 70 %%: plan chose unit %d (fits %v), want unit %d", name, r.Units, r.Fits, row.Units)
	case f == 1 && r.Fits && r.Units <= row.Units:
		t.Errorf("%s at 100 %%: plan chose unit %d, want a larger tier", name, r.Units)
	case f == 1 && r.DecidingUnits == row.Units && r.Deciding != worst.Limit:
		t.Errorf("%s at 100 %%: deciding %q, want %q", name, r.Deciding, worst.Limit)
	case f == 1 && !r.Fits && (r.Units != row.Units || r.Deciding != worst.Limit):
		t.Errorf("%s at 100 %% on the largest tier: unit %d, deciding %q, want unit %d, %q", name, r.Units, r.Deciding, row.Units, worst.Limit)
	}
}

// rowLoad builds a workload scenario that is fraction f of a table row:
// fan-out tables scale their receivers, the others their senders.
func rowLoad(sc *scenario, row TableRow, f float64) Load {
	l := Load{
		Name: "row", Kind: sc.kind, Connections: int64(math.Round(float64(row.Connections) * f)),
		Senders: int64(math.Round(float64(row.Senders) * f)), MessageSize: Size(row.MessageSize), SendInterval: row.SendInterval,
	}
	switch {
	case sc.fanout == fanoutAll:
		l.Senders = row.Senders
	case sc.name == TableBigGroup:
		l.Senders, l.GroupCount = row.Senders, row.GroupCount
	case sc.fanout == fanoutGroup:
		l.GroupSize = row.GroupSize
	}
	return l
}

func TestPlanRoutingCeilings(t *testing.T) {
	// SignalR small groups at unit 50's full rate: bandwidth would allow unit
	// 100, but the routing cost keeps unit 100 at unit 50's message rate.
	small := Workload{Service: SignalR, Scenarios: []Load{{
		Name: "rooms", Kind: KindSendToGroup, Connections: 50000, Senders: 10000, GroupSize: 10,
	}}}
	r, err := Plan(small)
	if err != nil {
		t.Fatal(err)
	}
	if r.Units != 200 || r.DecidingUnits != 100 || r.Deciding != "send_to_small_group inbound messages/s" {
		t.Errorf("small groups: unit %d, deciding %q on unit %d; want unit 200, the small-group rate on unit 100", r.Units, r.Deciding, r.DecidingUnits)
	}
	wantCaveat(t, r, "routing cost of small groups")

	// Send to connection has no unit 10 column: interpolated between 2 and 20.
	peer := Workload{Service: SignalR, Scenarios: []Load{{Name: "chat", Kind: KindSendToConnection, Connections: 6000}}}
	r, err = Plan(peer)
	if err != nil {
		t.Fatal(err)
	}
	c := findCheck(t, r.Checks, "send_to_connection inbound messages/s")
	if r.Units != 10 || !c.Interpolated || c.Capacity != 10000 || c.Utilization != 0.6 {
		t.Errorf("send to connection: unit %d, check %+v; want unit 10, interpolated capacity 10000 at 0.6", r.Units, c)
	}
	wantCaveat(t, r, "interpolated")
}

func TestPlanMixSumsBandwidth(t *testing.T) {
	w := Workload{Service: SignalR, Scenarios: []Load{
		{Name: "echo", Kind: KindEcho, Connections: 3000},
		{Name: "news", Kind: KindBroadcast, Connections: 5000, Senders: 1, MessageSize: 100},
	}}
	r, err := Plan(w)
	if err != nil {
		t.Fatal(err)
	}
	if r.Total.Connections != 8000 || r.Total.InboundBytesPerSecond != 3000*2048+1024 || r.Total.OutboundBytesPerSecond != 3000*2048+5000*1024 {
		t.Errorf("totals %+v", r.Total)
	}
	if r.Scenarios[1].CountedMessageSize != 1024 {
		t.Errorf("a 100-byte message counted as %d bytes, want 1024", r.Scenarios[1].CountedMessageSize)
	}
	if r.Units != 50 || r.Deciding != LimitConnections || r.DecidingUnits != 10 || r.DecidingUtilization != 0.8 {
		t.Errorf("mix: unit %d, deciding %q on %d at %.2f; want unit 50, connections on unit 10 at 0.80", r.Units, r.Deciding, r.DecidingUnits, r.DecidingUtilization)
	}
	wantCaveat(t, r, "under 1024 bytes are counted as 1024 bytes")
	wantCaveat(t, r, ": news")

	w.Connections = 5000 // the echo clients also receive the broadcast
	if r, err = Plan(w); err != nil || r.Units != 10 || r.Total.Connections != 5000 {
		t.Errorf("shared connections: unit %d, %d connections, err %v; want unit 10, 5000", r.Units, r.Total.Connections, err)
	}
}

func TestPlanGroupTableBySize(t *testing.T) {
	for _, tc := range []struct {
		size, count int64
		table       string
	}{
		{19, 0, TableSmallGroup}, {20, 0, TableBigGroup}, {0, 100, TableSmallGroup}, {0, 10, TableBigGroup},
	} {
		w := Workload{Service: WebPubSub, Scenarios: []Load{{
			Name: "g", Kind: KindSendToGroup, Connections: 1000, Senders: 10, GroupSize: tc.size, GroupCount: tc.count,
		}}}
		r, err := Plan(w)
		if err != nil {
			t.Fatal(err)
		}
		if r.Scenarios[0].Table != tc.table {
			t.Errorf("group size %d / count %d planned with %s, want %s", tc.size, tc.count, r.Scenarios[0].Table, tc.table)
		}
	}
}

func TestPlanNothingFits(t *testing.T) {
	w := Workload{Service: SignalR, Scenarios: []Load{{Name: "all", Kind: KindBroadcast, Connections: 800000, Senders: 2}}}
	r, err := Plan(w)
	if err != nil {
		t.Fatal(err)
	}
	if r.Fits || r.Units != 1000 || r.Deciding != LimitOutbound || r.DecidingUtilization != 0.8 {
		t.Errorf("plan: fits %v, unit %d, deciding %q at %.2f; want no fit on unit 1000, outbound at 0.80", r.Fits, r.Units, r.Deciding, r.DecidingUtilization)
	}
	wantCaveat(t, r, "no tier")
}

func TestPlanRejectsBadWorkloads(t *testing.T) {
	base := func() Workload {
		return Workload{Service: SignalR, Scenarios: []Load{{Name: "a", Kind: KindBroadcast, Connections: 10, Senders: 1}}}
	}
	for _, tc := range []struct {
		edit func(*Workload)
		path string
	}{
		{func(w *Workload) { w.Service = "pubnub" }, "service"},
		{func(w *Workload) { w.MaxLoad = 1.5 }, "max_load"},
		{func(w *Workload) { w.Scenarios = nil }, "scenarios"},
		{func(w *Workload) { w.Scenarios[0].Senders = 0 }, "scenarios[0].senders"},
		{func(w *Workload) { w.Scenarios[0].Senders = 11 }, "scenarios[0].senders"},
		{func(w *Workload) { w.Scenarios[0].Kind = KindUpstreamEcho }, "scenarios[0].kind"},
		{func(w *Workload) { w.Scenarios[0].GroupSize = 5 }, "scenarios[0].group_size"},
		{func(w *Workload) { w.Scenarios = append(w.Scenarios, w.Scenarios[0]) }, "scenarios[1].name"},
		{func(w *Workload) { w.Connections = 5 }, "connections"},
		{func(w *Workload) {
			w.Scenarios[0].Kind, w.Scenarios[0].GroupSize, w.Scenarios[0].GroupCount = KindSendToGroup, 2, 5
		}, "scenarios[0].group_size"},
	} {
		w := base()
		tc.edit(&w)
		_, err := Plan(w)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Path != tc.path {
			t.Errorf("want a FieldError at %s, got %v", tc.path, err)
		}
	}
}

func findCheck(t *testing.T, checks []Check, limit string) Check {
	t.Helper()
	for _, c := range checks {
		if c.Limit == limit {
			return c
		}
	}
	t.Fatalf("no %q check in %+v", limit, checks)
	return Check{}
}

func wantCaveat(t *testing.T, r Recommendation, part string) {
	t.Helper()
	for _, c := range r.Caveats {
		if strings.Contains(c, part) {
			return
		}
	}
	t.Errorf("no caveat mentions %q: %q", part, r.Caveats)
}
