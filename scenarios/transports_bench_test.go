//go:build unix

package scenarios_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// benchWorkload is one workload of BenchmarkTransports.
type benchWorkload struct {
	name  string
	build func() config.Scenario
}

var benchWorkloads = []benchWorkload{
	// The hub pushes batches of 1,000 messages of 256 bytes to one client
	// that asked for them: a server-to-client throughput test.
	{"push1000", func() config.Scenario {
		s := scenario("server_push", 1, 2*time.Second, 500*time.Millisecond)
		s.BatchSize = 1000
		return s
	}},
	// 20 clients each echo a 256-byte message every 20 ms: 1,000 messages a
	// second each way, paced open loop.
	{"echo1000ps", func() config.Scenario {
		return scenario("echo", 20, 2*time.Second, 20*time.Millisecond)
	}},
}

// BenchmarkTransports runs each workload over every transport against the
// embedded hub, in process, one scenario run per iteration. Besides ns/op
// (one whole run) it reports the delivered messages per second, the CPU
// time of the whole process (probe and hub together) per 1,000 delivered
// messages, the per-message latency p50 and p99, the time from a push
// request to the last message of its batch (p50, push only), and the wire
// bytes the client read per message. Run it with
//
//	go test -run '^$' -bench Transports -benchtime 3x ./scenarios/
func BenchmarkTransports(b *testing.B) {
	srv := hubtest.Start(b, hub.Options{})
	for _, wl := range benchWorkloads {
		for _, w := range wires {
			b.Run(fmt.Sprintf("%s/%s/%s", wl.name, w.transport, w.protocol), func(b *testing.B) {
				s := wl.build()
				s.Transport, s.Protocol, s.LossTimeout = w.transport, w.protocol, 5*time.Second
				benchRuns(b, srv.URL(), s)
			})
		}
	}
}

// benchTotals adds up the runs of one sub-benchmark.
type benchTotals struct {
	received, receivedBytes int64
	cpu                     time.Duration
	p50, p99, last          time.Duration
	runs                    int
}

func benchRuns(b *testing.B, url string, s config.Scenario) {
	var tot benchTotals
	for range b.N {
		before := cpuTime(b)
		rn := &scenarios.Runner{Scenario: s, Endpoint: scenariostest.SignalR(url), Recorder: scenarios.Discard}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res := rn.Run(ctx)
		cancel()
		if res.Outcome != scenarios.ResultSuccess || res.Lost > 0 {
			b.Fatalf("run failed: %s (lost %d)", res.Error, res.Lost)
		}
		tot.add(res, cpuTime(b)-before, s)
	}
	tot.report(b, s)
}

func (t *benchTotals) add(res scenarios.Result, cpu time.Duration, s config.Scenario) {
	t.received += res.Received
	t.receivedBytes += res.ReceivedBytes
	t.cpu += cpu
	t.p50 += res.Latency.P50
	t.p99 += res.Latency.P99
	t.last += res.BatchLatency.P50
	t.runs++
}

func (t *benchTotals) report(b *testing.B, s config.Scenario) {
	runs := time.Duration(t.runs)
	ms := func(d time.Duration) float64 { return float64(d/runs) / float64(time.Millisecond) }
	if s.Kind == "server_push" {
		// While a batch is in flight nothing else is: its messages over
		// the time to its last one is the push rate.
		b.ReportMetric(float64(s.BatchSize)/(float64(t.last/runs)/float64(time.Second)), "msgs/s")
		b.ReportMetric(ms(t.last), "last-ms")
	} else {
		b.ReportMetric(float64(t.received)/(s.Duration*runs).Seconds(), "msgs/s")
	}
	b.ReportMetric(float64(t.cpu)/float64(time.Millisecond)/float64(t.received)*1000, "cpu-ms/1k")
	b.ReportMetric(ms(t.p50), "p50-ms")
	b.ReportMetric(ms(t.p99), "p99-ms")
	b.ReportMetric(float64(t.receivedBytes)/float64(t.received), "B/msg")
}

// cpuTime is the user plus system CPU time this process used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
