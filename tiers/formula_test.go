package tiers

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

// eachRow calls f for every row of every table.
func eachRow(t *testing.T, f func(sc *scenario, r TableRow)) {
	t.Helper()
	cat, err := catalogue()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, svc := range cat {
		for _, sc := range svc.scenarios {
			for _, r := range sc.rows {
				f(sc, r)
				n++
			}
		}
	}
	if n != 7*8+5*8 { // seven SignalR and five Web PubSub tables, eight columns each
		t.Errorf("visited %d rows, want %d", n, 7*8+5*8)
	}
}

// TestRowsFollowTheFormulas checks every row against the guides' formula
// bandwidth = connections × message size / send interval, per direction:
// senders for inbound, their receivers for outbound.
func TestRowsFollowTheFormulas(t *testing.T) {
	eachRow(t, func(sc *scenario, r TableRow) {
		name := r.Service + " " + r.Scenario + " unit " + itoa(r.Units)
		perSecond := float64(r.Senders) / r.SendInterval.Seconds()
		if perSecond != float64(r.InboundMessagesPerSecond) || r.Senders > r.Connections {
			t.Errorf("%s: %d senders every %s cannot make %d inbound messages/s on %d connections",
				name, r.Senders, r.SendInterval, r.InboundMessagesPerSecond, r.Connections)
		}
		wantOut := r.InboundMessagesPerSecond * int64(receiversOf(sc.fanout, r))
		if r.OutboundMessagesPerSecond != wantOut {
			t.Errorf("%s: outbound %d messages/s, fan-out %q gives %d", name, r.OutboundMessagesPerSecond, sc.fanout, wantOut)
		}
		if sc.fanout == fanoutGroup && r.GroupSize*r.GroupCount != r.Connections {
			t.Errorf("%s: %d groups of %d is not the %d connections", name, r.GroupCount, r.GroupSize, r.Connections)
		}
		if got, want := r.InboundBytesPerSecond, r.InboundMessagesPerSecond*r.MessageSize; got != want {
			t.Errorf("%s: inbound %d bytes/s, formula gives %d", name, got, want)
		}
		if got, want := r.OutboundBytesPerSecond, r.OutboundMessagesPerSecond*r.MessageSize; got != want {
			t.Errorf("%s: outbound %d bytes/s, formula gives %d", name, got, want)
		}
	})
}

func receiversOf(fanout string, r TableRow) int64 {
	switch fanout {
	case fanoutAll:
		return r.Connections
	case fanoutGroup:
		return r.GroupSize
	}
	return 1
}

// TestPrintedBandwidthIsBytes pins the unit choice: read as bytes per
// second, every printed cell is the formula's value rounded with 2,048 bytes
// taken as 2 kB (a ratio of exactly 1.024); read as bits, the cells that
// spell bits would be 8 times too small, so they cannot be bits.
func TestPrintedBandwidthIsBytes(t *testing.T) {
	bitCells := 0
	eachRow(t, func(_ *scenario, r TableRow) {
		for _, cell := range []struct {
			printed string
			formula int64
		}{{r.Printed.InboundBandwidth, r.InboundBytesPerSecond}, {r.Printed.OutboundBandwidth, r.OutboundBytesPerSecond}} {
			p, err := parsePrinted(cell.printed)
			if err != nil {
				t.Errorf("%s %s unit %d: printed %q: %v", r.Service, r.Scenario, r.Units, cell.printed, err)
				continue
			}
			if ratio := float64(cell.formula) / p.value; ratio < 1.0239 || ratio > 1.0241 {
				t.Errorf("%s %s unit %d: formula %d bytes/s is %.4f × the printed %q read as bytes, want 1.024",
					r.Service, r.Scenario, r.Units, cell.formula, ratio, cell.printed)
			}
			if p.bits {
				bitCells++
				if asBits := float64(cell.formula) / (p.value / 8); asBits < 8 {
					t.Errorf("%s %s unit %d: %q read as bits is only %.2f × off", r.Service, r.Scenario, r.Units, cell.printed, asBits)
				}
			}
		}
	})
	if bitCells == 0 {
		t.Error("no printed cell spells bits; the unit note in the data files would be stale")
	}
}

// TestBigGroupSizesFollowTheDefinition: the guides define a big group as
// connections / 10 members; the outbound rates follow that, while some
// printed member counts do not, and are kept apart as printed.
func TestBigGroupSizesFollowTheDefinition(t *testing.T) {
	for _, svc := range []string{SignalR, WebPubSub} {
		units, _ := Units(svc)
		differ := 0
		for _, u := range units {
			r, err := Row(svc, TableBigGroup, u)
			if err != nil {
				t.Fatal(err)
			}
			if r.GroupCount != 10 || r.GroupSize != r.Connections/10 {
				t.Errorf("%s unit %d: %d groups of %d, want 10 groups of %d", svc, u, r.GroupCount, r.GroupSize, r.Connections/10)
			}
			if r.Printed.GroupSize != r.GroupSize {
				differ++
			}
		}
		want := map[string]int{SignalR: 6, WebPubSub: 3}[svc] // units 10… and 200/500/1000
		if differ != want {
			t.Errorf("%s: %d printed big-group sizes differ from the definition, want %d", svc, differ, want)
		}
	}
}

func TestLimitsTakeEachTiersMaxima(t *testing.T) {
	for _, tc := range []struct {
		service                 string
		units                   int
		want                    TierLimits
		inboundFrom, outboundOf string
	}{
		{SignalR, 1, TierLimits{Connections: 1000, InboundBytesPerSecond: 2048000, OutboundBytesPerSecond: 4096000, InboundMessagesPerSecond: 1000, OutboundMessagesPerSecond: 2000}, "echo", "broadcast"},
		{SignalR, 100, TierLimits{Connections: 100000, InboundBytesPerSecond: 204800000, OutboundBytesPerSecond: 409600000, InboundMessagesPerSecond: 100000, OutboundMessagesPerSecond: 200000}, "echo", "broadcast"},
		{SignalR, 1000, TierLimits{Connections: 1000000, InboundBytesPerSecond: 2048000000, OutboundBytesPerSecond: 4096000000, InboundMessagesPerSecond: 1000000, OutboundMessagesPerSecond: 2000000}, "echo", "broadcast"},
		{WebPubSub, 1, TierLimits{Connections: 1000, InboundBytesPerSecond: 1024000, OutboundBytesPerSecond: 6144000, InboundMessagesPerSecond: 500, OutboundMessagesPerSecond: 3000}, "upstream_echo", "send_to_big_group"},
		{WebPubSub, 50, TierLimits{Connections: 50000, InboundBytesPerSecond: 51200000, OutboundBytesPerSecond: 307200000, InboundMessagesPerSecond: 25000, OutboundMessagesPerSecond: 150000}, "upstream_echo", "send_to_big_group"},
	} {
		got, err := Limits(tc.service, tc.units)
		if err != nil {
			t.Fatal(err)
		}
		tc.want.Service, tc.want.Units, tc.want.InboundFrom, tc.want.OutboundFrom = tc.service, tc.units, tc.inboundFrom, tc.outboundOf
		if got != tc.want {
			t.Errorf("Limits(%s, %d):\n got %+v\nwant %+v", tc.service, tc.units, got, tc.want)
		}
	}
}

func TestLookupErrors(t *testing.T) {
	if _, err := Limits(SignalR, 20); !errors.Is(err, ErrUnknownTier) {
		t.Errorf("Limits(signalr, 20) = %v, want ErrUnknownTier (no echo or broadcast column)", err)
	}
	if _, err := Limits("pubnub", 1); !errors.Is(err, ErrUnknownService) {
		t.Errorf("Limits(pubnub) = %v, want ErrUnknownService", err)
	}
	if _, err := Row(SignalR, "send_to_connection", 10); !errors.Is(err, ErrUnknownTier) {
		t.Errorf("Row(send_to_connection, 10) = %v, want ErrUnknownTier (the table has unit 20)", err)
	}
	if _, err := Row(WebPubSub, "echo", 1); !errors.Is(err, ErrUnknownScenario) {
		t.Errorf("Row(webpubsub, echo) = %v, want ErrUnknownScenario", err)
	}
	if got := Services(); !slices.Equal(got, []string{SignalR, WebPubSub}) {
		t.Errorf("Services() = %v", got)
	}
	if src, _ := Source(WebPubSub); src != "Performance guide for Azure Web PubSub Service" {
		t.Errorf("Source(webpubsub) = %q", src)
	}
}

func TestDataFilesDecodeStrictly(t *testing.T) {
	good, err := dataFS.ReadFile("data/signalr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string]string{
		"unknown key":   strings.Replace(string(good), "rate_ceiling: false", "rate_ceiling: false\n    ceiling_note: x", 1),
		"short column":  strings.Replace(string(good), "[1000,     2000,     10000,    50000,     100000,    200000,    500000,     1000000]", "[1000, 2000]", 1),
		"float count":   strings.Replace(string(good), "inbound_messages_per_second:   [2,", "inbound_messages_per_second:   [2.5,", 1),
		"version":       strings.Replace(string(good), "version: 1", "version: 2", 1),
		"bits":          strings.Replace(string(good), "bandwidth_unit: bytes_per_second", "bandwidth_unit: bits_per_second", 1),
		"two documents": string(good) + "\n---\nversion: 1\n",
		"missing unit":  strings.Replace(string(good), "units:                         [1,        2,        10,       50,        100,       200,       500,        1000]\n    connections:                   [1000,     2000,     10000,    50000,     100000,    200000,    500000,     1000000]\n    inbound_messages_per_second:   [2,", "units:                         [1,        2,        11,       50,        100,       200,       500,        1000]\n    connections:                   [1000,     2000,     10000,    50000,     100000,    200000,    500000,     1000000]\n    inbound_messages_per_second:   [2,", 1),
	} {
		if raw == string(good) {
			t.Fatalf("%s: the edit did not apply", name)
		}
		_, err := decodeService([]byte(raw), "data/signalr.yaml")
		if err == nil {
			t.Errorf("%s: decoded without error", name)
		}
		var yerr *yamldecode.Error
		if !errors.As(err, &yerr) || yerr.File != "data/signalr.yaml" || yerr.Msg == "" {
			t.Errorf("%s: error %#v does not name the file", name, err)
		}
	}
	if _, err := decodeService(good, "data/signalr.yaml"); err != nil {
		t.Errorf("the shipped file: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
