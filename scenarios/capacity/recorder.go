package capacity

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
)

// stepRecorder sits between a capacity search's tracker and the scenario's
// recorder. It accounts every delivery to the step that sent it, and bytes
// and throttles to the step running when they happen.
//
// It passes on what describes connections (connects, failures, HTTP codes)
// and the run itself, but keeps message latencies, counts, bytes, throttles
// and send lag to the search: a search drives the hub past its capacity on
// purpose, and those series feed the alerts that watch the canary's SLO.
type stepRecorder struct {
	scenarios.Recorder // connection and run events go through unchanged

	current atomic.Pointer[stepStats]
	opts    StepOptions // set before the first step

	mu    sync.Mutex
	steps []*stepStats // in order of start
}

// stepStats is one step's tally.
type stepStats struct {
	start   time.Time
	settled time.Time // when the step was judged; set by snapshot

	sentBytes, receivedBytes, throttled atomic.Int64

	// under stepRecorder.mu
	received, slow int64
	latencies      scenarios.DurationHistogram
	classes        []int64 // by opts.LatencyBounds; nil without them
}

func newStepRecorder(inner scenarios.Recorder) *stepRecorder { return &stepRecorder{Recorder: inner} }

// begin starts a new step now.
func (r *stepRecorder) begin() *stepStats {
	s := &stepStats{start: time.Now()}
	if r.opts.LatencyBounds != nil {
		s.classes = make([]int64, len(r.opts.LatencyBounds)+1)
	}
	r.mu.Lock()
	r.steps = append(r.steps, s)
	r.mu.Unlock()
	r.current.Store(s)
	return s
}

// idle ends the current step's share of bytes and throttles.
func (r *stepRecorder) idle() { r.current.Store(nil) }

func (r *stepRecorder) received(s *stepStats) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return s.received
}

// snapshot freezes what the step measured so far.
func (r *stepRecorder) snapshot(s *stepStats) Step {
	step := Step{
		SentBytes: s.sentBytes.Load(), ReceivedBytes: s.receivedBytes.Load(), Throttled: s.throttled.Load(),
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s.settled = time.Now()
	step.Received, step.Slow = s.received, s.slow
	step.Latency = s.latencies.Quantiles()
	return step
}

// Delivered finds the step that sent the message from its send time;
// duplicates are kept to the search.
func (r *stepRecorder) Delivered(d scenarios.Delivery) {
	if d.Duplicate {
		return
	}
	latency := d.Latency
	sentAt := time.Now().Add(-latency)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.steps) - 1; i >= 0; i-- {
		s := r.steps[i]
		if s.start.After(sentAt) {
			continue
		}
		s.received++
		if latency >= scenarios.SlowThreshold {
			s.slow++
		}
		s.latencies.Record(latency)
		if s.classes != nil {
			s.classes[latencyClass(r.opts.LatencyBounds, latency)]++
		}
		return
	}
}

func (r *stepRecorder) BytesSent(n int) {
	if s := r.current.Load(); s != nil {
		s.sentBytes.Add(int64(n))
	}
}

func (r *stepRecorder) BytesReceived(n int) {
	if s := r.current.Load(); s != nil {
		s.receivedBytes.Add(int64(n))
	}
}

// Event counts a throttle against the running step, and keeps lost
// messages to the search; every other event goes through. A throttle
// outside the steps (while connecting) is the canary's own problem and
// goes through too.
func (r *stepRecorder) Event(e scenarios.Event) {
	switch e.Kind {
	case scenarios.MessagesLost:
		return
	case scenarios.Throttled:
		if s := r.current.Load(); s != nil {
			s.throttled.Add(1)
			return
		}
	}
	r.Recorder.Event(e)
}

// Sent is kept to the search; see the type's comment.
func (r *stepRecorder) Sent(time.Duration) {}

// RoundTrip is kept to the search too: a hub driven past its capacity
// answers pings late, and the round-trip series feed the latency alerts'
// account of where the time goes.
func (r *stepRecorder) RoundTrip(time.Duration) {}
