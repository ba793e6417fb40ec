package capacity

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/throttle"
)

func TestJudgeFollowsTheCapacityDefinition(t *testing.T) {
	ok := Step{Senders: 10, Expected: 1000, Received: 1000}
	tests := []struct {
		name string
		step Step
		want string
	}{
		{"everything on time", ok, ""},
		{"1 % slow is still within", Step{Senders: 10, Expected: 1000, Received: 1000, Slow: 10}, ""},
		{"just over 1 % slow", Step{Senders: 10, Expected: 1000, Received: 1000, Slow: 11}, StopSlowMessages},
		{"missing messages count as slow", Step{Senders: 10, Expected: 1000, Received: 985, Slow: 0}, StopSlowMessages},
		{"nothing expected", Step{Senders: 10}, StopSlowMessages},
		{"no senders on this shard in this step", Step{}, ""},
		{"one throttle", Step{Senders: 10, Expected: 1000, Received: 1000, Throttled: 1}, StopThrottled},
		{"1 of 100 connections failed", Step{Senders: 10, Expected: 1000, Received: 1000, FailedConnections: 1}, ""},
		{"2 of 100 connections failed, throttled too", Step{Senders: 10, Expected: 1000, Received: 900, FailedConnections: 2, Throttled: 5}, StopConnectionFailures},
		{"send lag p99 at the bound", Step{Senders: 10, Expected: 1000, Received: 1000, SendLagP99: 100 * time.Millisecond}, ""},
		{"send lag p99 past the bound, hub slow too", Step{Senders: 10, Expected: 1000, Received: 1000, Slow: 50, SendLagP99: 101 * time.Millisecond}, StopProbeSaturated},
		{"one send the pacer never made", Step{Senders: 10, Expected: 1000, Received: 1000, Unsent: 1}, StopProbeSaturated},
	}
	for _, tt := range tests {
		if got := judge(tt.step, 100, 100*time.Millisecond); got != tt.want {
			t.Errorf("%s: judge = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Deliveries count against the step that sent them, even when they arrive
// during a later one; bytes and throttles against the step running.
func TestStepRecorderAttribution(t *testing.T) {
	inner := &countingRecorder{}
	rec := newStepRecorder(inner)
	rec.Event(scenarios.Event{Kind: scenarios.Throttled, Reason: throttle.HTTP429}) // while connecting: the canary's own
	first := rec.begin()
	first.start = first.start.Add(-3 * time.Second) // as if it began 3 s ago
	rec.BytesSent(100)
	rec.Event(scenarios.Event{Kind: scenarios.Throttled, Reason: throttle.MessageLimit})
	second := rec.begin()
	time.Sleep(30 * time.Millisecond)
	rec.BytesReceived(50)
	// Sent 10 ms ago: in the second step. Sent 1.2 s ago: in the first,
	// and slow. Sent 5 s ago: before any step, counted nowhere.
	rec.Delivered(scenarios.Delivery{Latency: 10 * time.Millisecond})
	rec.Delivered(scenarios.Delivery{Latency: 1200 * time.Millisecond})
	rec.Delivered(scenarios.Delivery{Latency: 5 * time.Second})
	rec.idle()
	rec.BytesSent(999) // between steps: nobody's
	a, b := rec.snapshot(first), rec.snapshot(second)
	if a.Received != 1 || a.Slow != 1 || a.SentBytes != 100 || a.Throttled != 1 {
		t.Errorf("first step: %+v", a)
	}
	if b.Received != 1 || b.Slow != 0 || b.ReceivedBytes != 50 || b.Latency.P99 < 9900*time.Microsecond || b.Latency.P99 > 10100*time.Microsecond {
		t.Errorf("second step: %+v", b)
	}
	if inner.throttled != 1 || inner.received != 0 || inner.bytes != 0 {
		t.Errorf("passed on %d throttles, %d deliveries, %d bytes; want only the throttle while connecting",
			inner.throttled, inner.received, inner.bytes)
	}
}

type countingRecorder struct {
	scenarios.Recorder
	throttled, received, bytes int
}

func (c *countingRecorder) Event(e scenarios.Event) {
	if e.Kind == scenarios.Throttled {
		c.throttled++
	}
}
func (c *countingRecorder) Delivered(scenarios.Delivery) { c.received++ }
func (c *countingRecorder) RoundTrip(time.Duration)      {}
func (c *countingRecorder) BytesSent(n int)              { c.bytes += n }
func (c *countingRecorder) BytesReceived(n int)          { c.bytes += n }
