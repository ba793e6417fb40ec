package scenarios

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/internal/ledger"
)

// The shares of every shard add up to n exactly and tile 0…n-1 in order.
func TestShardSharesAddUpAndTile(t *testing.T) {
	for count := 1; count <= 7; count++ {
		for _, n := range []int{0, 1, 2, 3, 10, 11, 100, 100001} {
			sum, next := 0, 0
			for i := range count {
				s := Shard{Index: i, Count: count}
				if s.First(n) != next {
					t.Errorf("%d shards, n %d: shard %d starts at %d, want %d", count, n, i, s.First(n), next)
				}
				if want := n/count + btoi(i < n%count); s.Share(n) != want {
					t.Errorf("%d shards, n %d: shard %d has %d, want %d", count, n, i, s.Share(n), want)
				}
				sum += s.Share(n)
				next += s.Share(n)
			}
			if sum != n {
				t.Errorf("%d shards, n %d: shares add up to %d", count, n, sum)
			}
		}
	}
	if (Shard{}).Share(10) != 10 || (Shard{}).First(10) != 0 || (Shard{}).Sharded() {
		t.Error("the zero Shard is not one process doing everything")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestShardValidate(t *testing.T) {
	for _, s := range []Shard{{0, 1}, {2, 3}} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for s, want := range map[Shard]string{
		{0, 0}:  "shard count 0 must be at least 1",
		{3, 3}:  "shard index 3 must be at least 0 and below the shard count 3",
		{-1, 2}: "shard index -1 must be at least 0 and below the shard count 2",
	} {
		if err := s.Validate(); err == nil || err.Error() != want {
			t.Errorf("%+v: %v, want %q", s, err, want)
		}
	}
}

// Every shard names a run and its groups alike; each marks its payloads
// differently, and ignores the others'.
func TestShardsShareRunIDsAndGroupsButNotPayloads(t *testing.T) {
	at := time.Unix(1_700_000_010, 0)
	if runID("echo", at) != runID("echo", at) || //nolint:staticcheck // the same call twice is the test: runID must be deterministic
		runID("echo", at) == runID("echo", at.Add(time.Second)) ||
		runID("echo", at) == runID("broadcast", at) {
		t.Error("runID is not a function of the scenario and the instant alone")
	}
	cfg := config.Scenario{Name: "group", Connections: 31, GroupSize: 10}
	var names [3]map[string]int // per shard: group name → members there
	for i := range 3 {
		rn := &Runner{Scenario: cfg, Shard: Shard{Index: i, Count: 3}}
		run := rn.newRun(cfg, nil, at)
		run.Clients = make([]*Client, rn.Connections())
		g := newGroupLayout(cfg)
		g.first = run.first
		names[i] = map[string]int{}
		for c := range run.Clients {
			names[i][g.groupName(run, c)]++
		}
	}
	// 31 connections over 3 shards: 0–10, 11–20, 21–30; groups of 10.
	id := runID("group", at)
	want := [3]map[string]int{
		{"hubprobe-" + id + "-0": 10, "hubprobe-" + id + "-1": 1},
		{"hubprobe-" + id + "-1": 9, "hubprobe-" + id + "-2": 1},
		{"hubprobe-" + id + "-2": 9, "hubprobe-" + id + "-3": 1},
	}
	for i := range 3 {
		if len(names[i]) != len(want[i]) {
			t.Errorf("shard %d groups %v, want %v", i, names[i], want[i])
		}
		for n, m := range want[i] {
			if names[i][n] != m {
				t.Errorf("shard %d groups %v, want %v", i, names[i], want[i])
			}
		}
	}
	a := newPayloadBuilder(runMarker(id, Shard{0, 3}), 16)
	b := newPayloadBuilder(runMarker(id, Shard{1, 3}), 16)
	p := a.Append(nil, "", "", ledger.MessageID(2, 7))
	if _, got, ok := a.Parse(p); !ok || got != ledger.MessageID(2, 7) {
		t.Errorf("shard 0 does not read its own payload: %v %d", ok, got)
	}
	if _, _, ok := b.Parse(p); ok {
		t.Error("shard 1 counts shard 0's payload")
	}
}
