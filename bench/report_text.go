package bench

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

const separator = "-----------"

// percentiles are the benchmark's report percentiles.
var percentiles = []float64{0.5, 0.9, 0.95, 0.99}

// notBelow1s is the benchmark's bound for a percentile not reached below
// 1 s.
const notBelow1s = 1100

// WriteText prints the report in the benchmark's layout (its lines, spaces
// and number formats), each step followed by hubprobe's own lines: the
// latency classes, exact quantiles, deliveries and the round check.
func (r *Report) WriteText(w io.Writer) error {
	lines := []string{separator, fmt.Sprintf("  %d connections established in %ds", r.connected(), int(r.Established/time.Second))}
	for _, it := range r.Items {
		lines = append(lines, separator)
		lines = append(lines, it.benchmarkLines(r.Plan)...)
		lines = append(lines, it.hubprobeLines()...)
	}
	lines = append(lines, separator)
	if stop := r.stopped(); stop != "" {
		lines = append(lines, " Stopped: "+stop)
	}
	lines = append(lines, " Result: "+r.verdict())
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// connected is how many connections the setup established: all of them,
// unless it failed.
func (r *Report) connected() int {
	if len(r.Items) == 0 {
		return 0
	}
	return r.Plan.Connections
}

// benchmarkLines are the step's lines as the benchmark prints them; rates
// divide by the step's whole seconds, as there.
func (it Item) benchmarkLines(p *Plan) []string {
	t := float64(it.Seconds)
	lines := []string{
		fmt.Sprintf(" Connections/sendingStep: %d/%d in %ds", it.Connected, it.Step.Senders, it.Seconds),
		fmt.Sprintf(" Messages: requests: %s, responses: %s", benchBytes(float64(it.SentSize)), benchBytes(float64(it.ReceivedSize))),
		fmt.Sprintf("   Requests/sec: %.2f", float64(it.Step.Sent)/t),
		fmt.Sprintf("   Responses/sec: %.2f", float64(it.Tally.Delivered)/t),
		fmt.Sprintf("   Write throughput: %s", benchBytes(float64(it.SentSize)/t)),
		fmt.Sprintf("   Read throughput: %s", benchBytes(float64(it.ReceivedSize)/t)),
		" Latency:",
	}
	return append(lines, it.percentileLines()...)
}

// percentileLines walk the 100 ms buckets as the benchmark does; a
// percentile not reached below 1 s prints the share under 1 s instead,
// and ends the list.
func (it Item) percentileLines() []string {
	var lines []string
	bounds := it.latencyList()
	for i, p := range percentiles {
		if bounds[i] == notBelow1s {
			under := float64(it.Tally.Delivered-it.Slow) / float64(it.Tally.Delivered)
			return append(lines, fmt.Sprintf("  %.2f%%: < 1000 ms", under*100))
		}
		lines = append(lines, fmt.Sprintf("  %.2f%%: < %d ms", p*100, bounds[i]))
	}
	return lines
}

// latencyList is, for each of percentiles, the first 100 ms bucket bound
// (in ms) by which that share of the step's deliveries arrived, or
// notBelow1s. With nothing delivered every share is reached at once.
func (it Item) latencyList() []int64 {
	out := make([]int64, len(percentiles))
	for i, p := range percentiles {
		out[i] = notBelow1s
		var sum int64
		for k := range v1Buckets {
			sum += v1Bucket(it.Tally.Classes, k)
			if float64(sum) >= float64(it.Tally.Delivered)*p {
				out[i] = int64(k+1) * 100
				break
			}
		}
	}
	return out
}

// hubprobeLines are hubprobe's additions to a step.
func (it Item) hubprobeLines() []string {
	lines := []string{" Latency classes:"}
	for _, c := range v2Classes {
		n := sumClasses(it.Tally.Classes, c.from, c.to)
		lines = append(lines, fmt.Sprintf("   %s: %d (%.2f%%)", c.Label, n, share(n, it.Tally.Delivered)*100))
	}
	q, s := it.Step.Latency, it.Step
	lines = append(lines,
		fmt.Sprintf(" Exact latency: p50 %s, p90 %s, p99 %s, max %s", ms(q.P50), ms(q.P90), ms(q.P99), ms(q.Max)),
		fmt.Sprintf(" Deliveries: sent %d, expected %d, received %d, lost %d (%d received within 1 s of the step's last send)",
			s.Sent, s.Expected, it.Tally.Delivered, it.Lost, s.Received),
		fmt.Sprintf(" Sending window %.3f s: %.2f msg/s in, %.2f msg/s out, %s/s in, %s/s out on the wire",
			s.Duration.Seconds(), s.InboundMessagesPerSecond(), s.OutboundMessagesPerSecond(),
			benchBytes(s.InboundBytesPerSecond()), benchBytes(s.OutboundBytesPerSecond())),
	)
	check := "ok"
	if len(it.Suspicious) > 0 {
		check = "SUSPICIOUS: " + strings.Join(it.Suspicious, "; ")
	}
	return append(lines, " Check: "+check)
}

func share(n, of int64) float64 {
	if of <= 0 {
		return 0
	}
	return float64(n) / float64(of)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }

// benchBytes formats bytes as the benchmark does: decimal units, each
// taken only above (not at) its size.
func benchBytes(v float64) string {
	switch {
	case v > 1e9:
		return fmt.Sprintf("%.2fGB", v/1e9)
	case v > 1e6:
		return fmt.Sprintf("%.2fMB", v/1e6)
	case v > 1e3:
		return fmt.Sprintf("%.2fKB", v/1e3)
	}
	return fmt.Sprintf("%.2fB", v)
}

// stopped says why the ramp ended before the file's last step, "" when it
// ran them all.
func (r *Report) stopped() string {
	if !r.Steps.Measured() || len(r.Items) >= r.Planned || len(r.Items) == 0 {
		return ""
	}
	last := r.Items[len(r.Items)-1]
	var why string
	switch r.Steps.StopReason {
	case capacity.StopConnectionFailures:
		why = fmt.Sprintf("connection fail percentage %.2f%% is greater than connectionFailPercentage %.2f%%",
			share(int64(last.Step.FailedConnections), int64(r.Plan.Connections))*100, r.Plan.ConnectionFailShare*100)
	default:
		seen := last.Step.Received + last.Step.Missing()
		why = fmt.Sprintf("%.2f%% of messages took 1 s or more, greater than latencyPercentage %.2f%%",
			share(last.Step.Slow+last.Step.Missing(), seen)*100, r.Plan.SlowShare*100)
	}
	return fmt.Sprintf("after step %d of %d: %s (the benchmark's conditional stop)", last.Step.Number, r.Planned, why)
}

// verdict is hubprobe's objective over the whole ramp, which decides the
// exit code.
func (r *Report) verdict() string {
	if !r.Steps.Measured() {
		return "FAILED: " + r.Steps.Result.Error
	}
	if r.Passed() {
		return "PASS (every step: 99 % of messages under 1 s, nothing lost)"
	}
	for _, it := range r.Items {
		switch {
		case it.Passed():
			continue
		case it.Lost > 0:
			return fmt.Sprintf("FAIL (step %d: %d of %d expected deliveries lost)", it.Step.Number, it.Lost, it.Step.Expected)
		case it.Step.Expected == 0:
			return fmt.Sprintf("FAIL (step %d: nothing was sent)", it.Step.Number)
		default:
			return fmt.Sprintf("FAIL (step %d: more than 1 %% of messages took 1 s or more)", it.Step.Number)
		}
	}
	return fmt.Sprintf("FAIL (%d of %d steps ran)", len(r.Items), r.Planned)
}
