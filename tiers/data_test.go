package tiers

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// guideCell is one column of one table, with every figure copied from the
// guide as printed (printed group size where the guide prints one).
type guideCell struct {
	service, scenario     string
	units                 int
	connections           int64
	inMsgs, outMsgs       int64
	printedIn, printedOut string
	groupSize, groupCount int64
	appServers            int
}

// guideCells are read off the "Performance guide for Azure SignalR Service"
// and the "Performance guide for Azure Web PubSub Service", cell by cell.
var guideCells = []guideCell{
	// SignalR, echo (and its app-server table).
	{"signalr", "echo", 1, 1000, 1000, 1000, "2 Mbit/s", "2 Mbit/s", 0, 0, 1},
	{"signalr", "echo", 10, 10000, 10000, 10000, "20 Mbit/s", "20 Mbit/s", 0, 0, 1},
	{"signalr", "echo", 50, 50000, 50000, 50000, "100 Mbit/s", "100 Mbit/s", 0, 0, 5},
	{"signalr", "echo", 500, 500000, 500000, 500000, "1000 Mbit/s", "1000 Mbit/s", 0, 0, 50},
	{"signalr", "echo", 1000, 1000000, 1000000, 1000000, "2000 Mbit/s", "2000 Mbit/s", 0, 0, 100},
	// SignalR, broadcast.
	{"signalr", "broadcast", 1, 1000, 2, 2000, "4 Kbit/s", "4 Mbit/s", 0, 0, 1},
	{"signalr", "broadcast", 50, 50000, 2, 100000, "4 Kbit/s", "200 Mbit/s", 0, 0, 2},
	{"signalr", "broadcast", 100, 100000, 2, 200000, "4 Kbit/s", "400 Mbit/s", 0, 0, 2},
	{"signalr", "broadcast", 200, 200000, 2, 400000, "4 Kbit/s", "800 MB/s", 0, 0, 4},
	{"signalr", "broadcast", 1000, 1000000, 2, 2000000, "4 Kbit/s", "4000 MBps", 0, 0, 20},
	// SignalR, send to small group.
	{"signalr", "send_to_small_group", 1, 1000, 200, 2000, "400 Kbit/s", "4 Mbit/s", 10, 100, 1},
	{"signalr", "send_to_small_group", 10, 10000, 2000, 20000, "4 Mbit/s", "40 Mbit/s", 10, 1000, 1},
	{"signalr", "send_to_small_group", 50, 50000, 10000, 100000, "20 Mbit/s", "200 Mbit/s", 10, 5000, 5},
	{"signalr", "send_to_small_group", 100, 100000, 10000, 100000, "20 Mbit/s", "200 Mbit/s", 10, 10000, 10},
	{"signalr", "send_to_small_group", 1000, 1000000, 100000, 1000000, "200 Mbit/s", "2000 Mbit/s", 10, 100000, 100},
	// SignalR, send to big group (printed member counts).
	{"signalr", "send_to_big_group", 1, 1000, 20, 2000, "40 Kbit/s", "4 Mbit/s", 100, 10, 1},
	{"signalr", "send_to_big_group", 10, 10000, 20, 20000, "40 Kbit/s", "40 Mbit/s", 500, 10, 2},
	{"signalr", "send_to_big_group", 100, 100000, 20, 200000, "40 Kbit/s", "400 Mbit/s", 2000, 10, 2},
	{"signalr", "send_to_big_group", 200, 200000, 20, 400000, "40 Kbit/s", "800 MB/s", 5000, 10, 4},
	{"signalr", "send_to_big_group", 1000, 1000000, 20, 2000000, "40 Kbit/s", "4000 MBps", 20000, 10, 20},
	// SignalR, send to connection (unit 20 column; no app-server figure there).
	{"signalr", "send_to_connection", 1, 1000, 1000, 1000, "2 Mbit/s", "2 Mbit/s", 0, 0, 1},
	{"signalr", "send_to_connection", 20, 20000, 20000, 20000, "40 Mbit/s", "40 Mbit/s", 0, 0, 0},
	{"signalr", "send_to_connection", 50, 50000, 20000, 20000, "40 Mbit/s", "40 Mbit/s", 0, 0, 5},
	{"signalr", "send_to_connection", 100, 100000, 20000, 20000, "40 Mbit/s", "40 Mbit/s", 0, 0, 10},
	{"signalr", "send_to_connection", 200, 200000, 40000, 40000, "80 Mbit/s", "80 Mbit/s", 0, 0, 20},
	{"signalr", "send_to_connection", 1000, 1000000, 200000, 200000, "400 Mbit/s", "400 Mbit/s", 0, 0, 100},
	// SignalR, REST.
	{"signalr", "rest_broadcast", 1, 1000, 2, 2000, "4 Kbit/s", "4 Mbit/s", 0, 0, 0},
	{"signalr", "rest_broadcast", 200, 200000, 2, 400000, "4 Kbit/s", "800 MBps", 0, 0, 0},
	{"signalr", "rest_broadcast", 500, 500000, 2, 1000000, "4 Kbit/s", "2000 MBps", 0, 0, 0},
	{"signalr", "rest_send_to_user", 1, 1000, 200, 200, "400 Kbit/s", "400 Kbit/s", 0, 0, 0},
	{"signalr", "rest_send_to_user", 100, 100000, 20000, 20000, "40 Mbit/s", "40 Mbit/s", 0, 0, 0},
	{"signalr", "rest_send_to_user", 1000, 1000000, 200000, 200000, "400 Mbit/s", "400 Mbit/s", 0, 0, 0},
	// Web PubSub, send to big group (printed member counts).
	{"webpubsub", "send_to_big_group", 1, 1000, 30, 3000, "60 kbps", "6 Mbps", 100, 10, 0},
	{"webpubsub", "send_to_big_group", 10, 10000, 30, 30000, "60 kbps", "60 Mbps", 1000, 10, 0},
	{"webpubsub", "send_to_big_group", 200, 200000, 30, 600000, "60 kbps", "1200 Mbps", 5000, 10, 0},
	{"webpubsub", "send_to_big_group", 1000, 1000000, 30, 3000000, "60 kbps", "6000 Mbps", 20000, 10, 0},
	// Web PubSub, send to small group.
	{"webpubsub", "send_to_small_group", 1, 1000, 200, 2000, "400 Kbps", "4 MBps", 10, 100, 0},
	{"webpubsub", "send_to_small_group", 50, 50000, 10000, 100000, "20 MBps", "200 MBps", 10, 5000, 0},
	{"webpubsub", "send_to_small_group", 100, 100000, 10000, 100000, "20 MBps", "200 MBps", 10, 10000, 0},
	{"webpubsub", "send_to_small_group", 1000, 1000000, 100000, 1000000, "200 MBps", "2000 MBps", 10, 100000, 0},
	// Web PubSub, echo through the upstream.
	{"webpubsub", "upstream_echo", 1, 1000, 500, 500, "1 Mbps", "1 Mbps", 0, 0, 0},
	{"webpubsub", "upstream_echo", 2, 2000, 1000, 1000, "2 MBps", "2 MBps", 0, 0, 0},
	{"webpubsub", "upstream_echo", 50, 50000, 25000, 25000, "50 Mbps", "50 Mbps", 0, 0, 0},
	{"webpubsub", "upstream_echo", 1000, 1000000, 500000, 500000, "1000 MBps", "1000 MBps", 0, 0, 0},
	// Web PubSub, REST.
	{"webpubsub", "rest_send_to_user", 1, 1000, 180, 180, "360 kbps", "360 kbps", 0, 0, 0},
	{"webpubsub", "rest_send_to_user", 10, 10000, 1800, 1800, "3.6 Mbps", "3.6 Mbps", 0, 0, 0},
	{"webpubsub", "rest_send_to_user", 1000, 1000000, 180000, 180000, "360 Mbps", "360 Mbps", 0, 0, 0},
	{"webpubsub", "rest_broadcast", 1, 1000, 3, 3000, "6 kbps", "6 Mbps", 0, 0, 0},
	{"webpubsub", "rest_broadcast", 500, 500000, 3, 1500000, "6 kbps", "3000 MB", 0, 0, 0},
	{"webpubsub", "rest_broadcast", 1000, 1000000, 3, 3000000, "6 kbps", "6000 MB", 0, 0, 0},
}

func TestRowsMatchTheGuides(t *testing.T) {
	for _, c := range guideCells {
		r, err := Row(c.service, c.scenario, c.units)
		if err != nil {
			t.Errorf("Row(%s, %s, %d): %v", c.service, c.scenario, c.units, err)
			continue
		}
		got := guideCell{
			r.Service, r.Scenario, r.Units, r.Connections, r.InboundMessagesPerSecond, r.OutboundMessagesPerSecond,
			r.Printed.InboundBandwidth, r.Printed.OutboundBandwidth, r.Printed.GroupSize, r.GroupCount, r.AppServers,
		}
		if got != c {
			t.Errorf("%s %s unit %d:\n got %+v\nwant %+v", c.service, c.scenario, c.units, got, c)
		}
		if r.MessageSize != 2048 || r.SendInterval != time.Second {
			t.Errorf("%s %s unit %d: message %d bytes every %s, want the guides' 2048 bytes every 1s", c.service, c.scenario, c.units, r.MessageSize, r.SendInterval)
		}
	}
}

// TestQuickEvaluationTablesAgree checks the SignalR guide's quick-evaluation
// tables (connections and bandwidth only) against the case-study rows.
func TestQuickEvaluationTablesAgree(t *testing.T) {
	units := []int{1, 2, 10, 50, 100, 200, 500, 1000}
	quick := map[string][3][]float64{ // connections, inbound, outbound as printed (MB, KB)
		"echo": {
			{1000, 2000, 10000, 50000, 100000, 200000, 500000, 1000000},
			{2e6, 4e6, 20e6, 100e6, 200e6, 400e6, 1000e6, 2000e6},
			{2e6, 4e6, 20e6, 100e6, 200e6, 400e6, 1000e6, 2000e6},
		},
		"broadcast": {
			{1000, 2000, 10000, 50000, 100000, 200000, 500000, 1000000},
			{4e3, 4e3, 4e3, 4e3, 4e3, 4e3, 4e3, 4e3},
			{4e6, 8e6, 40e6, 200e6, 400e6, 800e6, 2000e6, 4000e6},
		},
	}
	for name, cols := range quick {
		for i, u := range units {
			r, err := Row(SignalR, name, u)
			if err != nil {
				t.Fatal(err)
			}
			in, out := mustPrinted(t, r.Printed.InboundBandwidth), mustPrinted(t, r.Printed.OutboundBandwidth)
			if float64(r.Connections) != cols[0][i] || in.value != cols[1][i] || out.value != cols[2][i] {
				t.Errorf("%s unit %d: connections %d, printed %g / %g; quick table says %g, %g / %g",
					name, u, r.Connections, in.value, out.value, cols[0][i], cols[1][i], cols[2][i])
			}
		}
	}
}

// printedCell is a printed bandwidth cell: its magnitude with the prefix
// applied, and whether its unit spells bits.
type printedCell struct {
	value float64
	bits  bool
}

var printedPrefixes = map[byte]float64{'k': 1e3, 'K': 1e3, 'M': 1e6}

// parsePrinted reads cells such as "400 Kbit/s", "4 MBps", "3.6 Mbps" or
// "3000 MB": a prefix k/K/M, then B (bytes) or b/bit (bits).
func parsePrinted(s string) (printedCell, error) {
	num, unit, ok := strings.Cut(s, " ")
	if !ok || unit == "" {
		return printedCell{}, errors.New("no unit")
	}
	mult, ok := printedPrefixes[unit[0]]
	if !ok || len(unit) < 2 {
		return printedCell{}, errors.New("unknown prefix")
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return printedCell{}, err
	}
	switch rest := unit[1:]; rest {
	case "B", "Bps", "B/s":
		return printedCell{v * mult, false}, nil
	case "bps", "bit/s":
		return printedCell{v * mult, true}, nil
	}
	return printedCell{}, errors.New("unknown unit " + unit)
}

func mustPrinted(t *testing.T, s string) printedCell {
	t.Helper()
	c, err := parsePrinted(s)
	if err != nil {
		t.Fatalf("printed cell %q: %v", s, err)
	}
	return c
}
