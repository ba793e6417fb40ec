package tiers

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

func TestLoadWorkloadExample(t *testing.T) {
	w, err := LoadWorkload(filepath.Join("..", "examples", "plan-broadcast.workload.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w, workedExample(0.7)) {
		t.Errorf("example decodes to %+v, want the guide's worked example %+v", w, workedExample(0.7))
	}
}

func TestLoadWorkloadMix(t *testing.T) {
	w, err := LoadWorkload(filepath.Join("testdata", "mix.workload.yml"))
	if err != nil {
		t.Fatal(err)
	}
	want := Workload{Service: WebPubSub, MaxLoad: 0.6, Connections: 40000, Scenarios: []Load{
		{Name: "rooms", Kind: KindSendToGroup, Connections: 30000, Senders: 3000, GroupSize: 10, MessageSize: 512},
		{Name: "alerts", Kind: KindRESTBroadcast, Connections: 40000, Senders: 1, MessageSize: 2000, SendInterval: 10 * time.Second},
		{Name: "events", Kind: KindUpstreamEcho, Connections: 5000, SendInterval: 500 * time.Millisecond},
	}}
	if !reflect.DeepEqual(w, want) {
		t.Fatalf("got %+v\nwant %+v", w, want)
	}
	r, err := Plan(w)
	if err != nil {
		t.Fatal(err)
	}
	// rooms: 3,000 msg/s of 512 B counted as 1,024 B, to 10 members each;
	// alerts: 0.1 msg/s of 2,000 B to 40,000; events: 10,000 msg/s of 2,048 B.
	wantIn := 3000*1024 + 0.1*2000 + 10000*2048.0
	wantOut := 30000*1024 + 4000*2000 + 10000*2048.0
	if !near(r.Total.InboundBytesPerSecond, wantIn) || !near(r.Total.OutboundBytesPerSecond, wantOut) || r.Total.Connections != 40000 {
		t.Errorf("totals %+v, want in %.1f, out %.1f, 40000 connections", r.Total, wantIn, wantOut)
	}
	// On unit 50 inbound is 23.6 of 51.2 MB/s (46 %), the upstream echo
	// rate 10,000 of 25,000 msg/s (40 %), but 40,000 of 50,000 connections
	// is 80 %, over the file's 60 %: unit 100 it is.
	if !r.Fits || r.Units != 100 || r.Deciding != LimitConnections || r.DecidingUnits != 50 || r.DecidingUtilization != 0.8 {
		t.Errorf("mix: unit %d (fits %v), deciding %q on unit %d at %.2f; want unit 100, connections on unit 50 at 0.80",
			r.Units, r.Fits, r.Deciding, r.DecidingUnits, r.DecidingUtilization)
	}
	if c := findCheck(t, r.Checks, "upstream_echo inbound messages/s"); c.Demand != 10000 || c.Capacity != 50000 {
		t.Errorf("upstream echo check on unit 100: %+v", c)
	}
}

func near(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

func TestParseWorkloadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown top key", "service: signalr\nmaxload: 0.7\n",
			`w.yml:2: unknown key "maxload"`},
		{"unknown scenario key", "service: signalr\nscenarios:\n  - name: a\n    kind: echo\n    connections: 10\n    size: 2048\n",
			`w.yml:6: scenarios[0]: unknown key "size"`},
		{"float connections", "service: signalr\nscenarios:\n  - name: a\n    kind: echo\n    connections: 1.5\n",
			`w.yml:5: scenarios[0].connections: expected an integer, got "1.5"`},
		{"bad size", "service: signalr\nscenarios:\n  - name: a\n    kind: echo\n    connections: 10\n    message_size: 2 kilobytes\n",
			`w.yml:6: scenarios[0].message_size: expected a size such as 2048, "2KiB" or "20kB", got "2 kilobytes"`},
		{"bad duration", "service: signalr\nscenarios:\n  - name: a\n    kind: echo\n    connections: 10\n    send_interval: 5\n",
			`w.yml:6: scenarios[0].send_interval: expected a duration such as "10s", got "5"`},
		{"duplicate key", "service: signalr\nservice: webpubsub\n",
			`w.yml:2: duplicate key "service" (first at line 1)`},
		{"senders required", "service: signalr\nscenarios:\n  - name: a\n    kind: broadcast\n    connections: 10\n",
			`w.yml:3: scenarios[0].senders: is required for kind "broadcast"`},
		{"too many senders", "service: signalr\nscenarios:\n  - name: a\n    kind: echo\n    connections: 10\n    senders: 11\n",
			`w.yml:6: scenarios[0].senders: 11 is more than the 10 connections that could send`},
		{"kind without table", "service: webpubsub\nscenarios:\n  - name: a\n    kind: echo\n    connections: 10\n",
			`w.yml:4: scenarios[0].kind: "echo" has no table in the Performance guide for Azure Web PubSub Service; kinds with tables: [send_to_group upstream_echo rest_send_to_user rest_broadcast]`},
		{"unknown service", "service: pubnub\nscenarios: []\n",
			`w.yml:1: service: unknown service "pubnub" (known: [signalr webpubsub])`},
		{"max load", "service: signalr\nmax_load: 70\nscenarios:\n  - name: a\n    kind: echo\n    connections: 10\n",
			`w.yml:2: max_load: must be above 0 and at most 1, got 70`},
		{"max load not a number", "service: signalr\nmax_load: .nan\n",
			`w.yml:2: max_load: expected a finite number, got ".nan"`},
		{"duplicate scenario key", "service: signalr\nscenarios:\n  - name: a\n    kind: echo\n    name: b\n",
			`w.yml:5: scenarios[0]: duplicate key "name" (first at line 3)`},
		{"merge a scalar", "service: signalr\nscenarios:\n  - <<: echo\n",
			`w.yml:3: scenarios[0]: "<<" expects a mapping or a list of mappings`},
		{"not a list", "service: signalr\nscenarios: echo\n",
			`w.yml:2: scenarios: expected a list, got "echo"`},
		{"syntax", "service: signalr\nscenarios: [\n",
			`w.yml:2: did not find expected node content`},
		{"empty", "# nothing\n", `w.yml: the workload is empty`},
		{"two documents", "service: signalr\n---\nservice: signalr\n", `w.yml:2: only one YAML document is allowed`},
	} {
		_, err := ParseWorkload([]byte(tc.yaml), "w.yml")
		var we *WorkloadError
		if !errors.As(err, &we) || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

// Workload files take merge keys as configuration files do: written keys
// win over merged ones.
func TestParseWorkloadMergeKeys(t *testing.T) {
	data := "service: signalr\nscenarios:\n  - &base\n    name: a\n    kind: echo\n    connections: 10\n    message_size: 1KiB\n" +
		"  - <<: *base\n    name: b\n    connections: 20\n"
	w, err := ParseWorkload([]byte(data), "merge.yml")
	if err != nil {
		t.Fatal(err)
	}
	want := []Load{
		{Name: "a", Kind: KindEcho, Connections: 10, MessageSize: 1024},
		{Name: "b", Kind: KindEcho, Connections: 20, MessageSize: 1024},
	}
	if !reflect.DeepEqual(w.Scenarios, want) {
		t.Errorf("scenarios\n got %+v\nwant %+v", w.Scenarios, want)
	}
}

func TestLoadWorkloadMissingFile(t *testing.T) {
	_, err := LoadWorkload(filepath.Join(t.TempDir(), "none.yml"))
	if err == nil || !strings.HasSuffix(err.Error(), "none.yml: cannot read file: no such file or directory") {
		t.Errorf("got %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"2048": 2048, "20KiB": 20480, "20 KiB": 20480, "20kB": 20000, "20KB": 20000, "1MiB": 1 << 20, "1.5kB": 1500, "512B": 512,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "KiB", "1.5B", "2 kilobytes", "-1", "0"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

// Every workload key is described in docs/tiers.md.
func TestWorkloadKeysAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "tiers.md"))
	if err != nil {
		t.Fatal(err)
	}
	keys := append(yamldecode.Keys(reflect.TypeFor[Workload]()), yamldecode.Keys(reflect.TypeFor[Load]())...)
	if len(keys) != 12 {
		t.Fatalf("workload keys %v, want the 4 of a workload and the 8 of a scenario", keys)
	}
	for _, key := range keys {
		if !strings.Contains(string(doc), key+": <") && !strings.Contains(string(doc), "\n"+key+":\n") {
			t.Errorf("docs/tiers.md does not describe %q", key)
		}
	}
	for _, kind := range knownKinds {
		if !strings.Contains(string(doc), "`"+kind+"`") {
			t.Errorf("docs/tiers.md does not name kind %q", kind)
		}
	}
}
