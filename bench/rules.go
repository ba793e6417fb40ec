package bench

import (
	"fmt"
	"time"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

// latencyBounds split every step's deliveries finely enough for both of
// the benchmark's views: v1's 100 ms buckets up to 1 s, and the eight
// classes of its later (v2) generation.
var latencyBounds = []time.Duration{
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond,
	400 * time.Millisecond, 500 * time.Millisecond, 600 * time.Millisecond, 700 * time.Millisecond,
	800 * time.Millisecond, 900 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second,
}

// Classes of latencyBounds: class i holds latencies below latencyBounds[i]
// (and at or above the bound before); the last one those of 5 s or more.
const (
	class1s   = 11 // the first class at 1 s or more
	v1Buckets = 10 // message:lt:100 … message:lt:1000, 100 ms each
)

// v1Bucket is the benchmark's message:lt:{100(k+1)} counter, k = 0…9.
func v1Bucket(classes []int64, k int) int64 {
	if k == 0 {
		return classes[0] + classes[1] // below 50 ms and below 100 ms
	}
	return classes[k+1]
}

// slowCount is how many deliveries took 1 s or more.
func slowCount(classes []int64) int64 {
	var n int64
	for _, c := range classes[class1s:] {
		n += c
	}
	return n
}

// v2Classes are the later benchmark's latency classes, with the bounds
// its LatencyClass names say.
var v2Classes = []struct {
	Name, Label string
	from, to    int // latencyBounds classes [from, to)
}{
	{"LessThan50ms", "< 50 ms", 0, 1},
	{"LessThan100ms", "< 100 ms", 1, 2},
	{"LessThan200ms", "< 200 ms", 2, 3},
	{"LessThan500ms", "< 500 ms", 3, 6},
	{"LessThan1s", "< 1 s", 6, 11},
	{"LessThan2s", "< 2 s", 11, 12},
	{"LessThan5s", "< 5 s", 12, 13},
	{"MoreThan5s", ">= 5 s", 13, 14},
}

func sumClasses(classes []int64, from, to int) int64 {
	var n int64
	for _, c := range classes[from:to] {
		n += c
	}
	return n
}

// conditionalStop is the benchmark's v1 rule between steps: stop when the
// share of failed connections, or of messages at 1 s or more, is above
// the file's threshold. Messages still missing when the step is judged
// are already 1 s late and count as such. A step with nothing received,
// like one with no connections, passes, as its NaN share does there.
func (p *Plan) conditionalStop(s capacity.Step, connections int) string {
	if connections > 0 && float64(s.FailedConnections)/float64(connections) > p.ConnectionFailShare {
		return capacity.StopConnectionFailures
	}
	if seen := s.Received + s.Missing(); seen > 0 && float64(s.Slow+s.Missing())/float64(seen) > p.SlowShare {
		return capacity.StopSlowMessages
	}
	return ""
}

// Thresholds of the later benchmark's round check.
const (
	suspiciousShare = 0.05 // down connections, missing deliveries, slow messages
	connectedShare  = 0.75 // connections still up
)

// suspicious applies the later benchmark's round check to a step, in its
// order: too many connections down (hubprobe does not reconnect, so a
// dropped connection is what the benchmark counts as reconnecting), too
// few messages delivered, too many connections lost, too many messages at
// 1 s or more. It returns every rule the step breaks.
func suspicious(it Item, connections int) []string {
	var why []string
	down, c := it.Step.FailedConnections, float64(connections)
	if float64(down) > suspiciousShare*c {
		why = append(why, fmt.Sprintf("%d of %d connections down (more than 5 %%)", down, connections))
	}
	if d, e := it.Tally.Delivered, it.Step.Expected; d == 0 || float64(d) < (1-suspiciousShare)*float64(e) {
		why = append(why, fmt.Sprintf("%d of %d expected deliveries arrived (fewer than 95 %%)", d, e))
	}
	if up := connections - down; float64(up) < connectedShare*c {
		why = append(why, fmt.Sprintf("%d of %d connections up (fewer than 75 %%)", up, connections))
	}
	if float64(it.Slow) > suspiciousShare*float64(it.Tally.Delivered) {
		why = append(why, fmt.Sprintf("%d of %d messages took 1 s or more (more than 5 %%)", it.Slow, it.Tally.Delivered))
	}
	return why
}
