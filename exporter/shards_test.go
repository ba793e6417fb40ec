package exporter

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

func TestShardGauges(t *testing.T) {
	reg, _ := newTestMetrics(t, WithShard(2, 3))
	want := `
# HELP hubprobe_shard_count How many processes share every scenario (--shard.count); 1 when unsharded.
# TYPE hubprobe_shard_count gauge
hubprobe_shard_count 3
# HELP hubprobe_shard_info This process's shard of every scenario (--shard.index); always 1.
# TYPE hubprobe_shard_info gauge
hubprobe_shard_info{shard="2"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "hubprobe_shard_count", "hubprobe_shard_info"); err != nil {
		t.Fatal(err)
	}
}

// publishStep exports step n of a search named "run-a" for echoWS.
func publishStep(t *testing.T, m *Metrics, n int) {
	t.Helper()
	p, ok := m.Recorder(echoWS).(capacity.StepPublisher)
	if !ok {
		t.Fatal("the exporter's recorder does not publish capacity steps")
	}
	p.PublishStep(capacity.StepFigures{
		Run: "run-a", Connections: 4, Saturated: n == 2,
		Step: capacity.Step{Number: n, Senders: n, Sent: int64(10 * n), Expected: int64(10 * n), Received: int64(10*n - 1),
			Slow: 1, Unsent: 0, Throttled: int64(n - 1), FailedConnections: n - 1},
	})
}

// Only the last step published is exported, every figure a count that
// adds up over shards; forgetting the scenario drops it.
func TestPublishStepKeepsTheLastStep(t *testing.T) {
	reg, m := newTestMetrics(t)
	publishStep(t, m, 1)
	publishStep(t, m, 2)
	const labels = `run="run-a",scenario="echo-ws",step="2",target="hub-a"`
	want := "# HELP hubprobe_capacity_step This process's figures of the last finished step of a capacity search, by figure, for a sharded search to sum over its shards.\n" +
		"# TYPE hubprobe_capacity_step gauge\n"
	for _, f := range []struct {
		name  string
		value string
	}{
		{"connections", "4"}, {"expected", "20"}, {"failed_connections", "1"}, {"received", "19"}, {"saturated", "1"},
		{"senders", "2"}, {"sent", "20"}, {"shards", "1"}, {"slow", "1"}, {"throttled", "1"}, {"unsent", "0"},
	} {
		want += `hubprobe_capacity_step{figure="` + f.name + `",` + labels + "} " + f.value + "\n"
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "hubprobe_capacity_step"); err != nil {
		t.Fatal(err)
	}
	m.Forget(echoWS)
	if n := testutil.CollectAndCount(m.shards.step); n != 0 {
		t.Errorf("%d step series left after Forget", n)
	}
}
