package scenariostest

import (
	"slices"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios"
)

// Recorder tallies everything a run records, so that a test can assert
// on each count exactly. It is safe for concurrent use.
type Recorder struct {
	mu sync.Mutex
	t  Tally
}

// Tally is what a Recorder counted.
type Tally struct {
	// Sent counts the messages the hub took.
	Sent int64
	// Received counts first deliveries, Reordered those of them behind a
	// later message, Duplicated the repeats; HubTimes the first
	// deliveries with a hub time. Slowest are the deliveries marked so,
	// which carry exemplars.
	Received, Reordered, Duplicated int64
	HubTimes                        int64
	Slowest                         []scenarios.Delivery
	// Lost adds up the MessagesLost events' counts.
	Lost int64
	// Connects counts connect timings, Passed those that spent time in
	// each phase (clientconn.ConnectPhases), RoundTrips transport round
	// trips.
	Connects, RoundTrips int64
	Passed               map[string]int64
	// BytesSent and BytesReceived add up the wire's bytes.
	BytesSent, BytesReceived int64
	// Opened, Closed and Reconnected count those events; Failed,
	// Throttled and Dropped count theirs by reason; HTTP counts responses
	// by endpoint and status code.
	Opened, Closed, Reconnected int64
	Failed, Throttled, Dropped  map[string]int64
	// FailedAt are the times of the failed connects, in order.
	FailedAt []time.Time
	HTTP     map[HTTPResponse]int64
}

// HTTPResponse is one kind of HTTP response a Tally counts.
type HTTPResponse struct {
	Endpoint string
	Code     int
}

// Requests adds up the HTTP responses to endpoint, whatever their code.
func (t Tally) Requests(endpoint string) int64 {
	var n int64
	for r, c := range t.HTTP {
		if r.Endpoint == endpoint {
			n += c
		}
	}
	return n
}

// Active is how many connections are open: opened and not yet closed.
func (t Tally) Active() int64 { return t.Opened - t.Closed }

// NewRecorder is an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{t: Tally{Failed: map[string]int64{}, Throttled: map[string]int64{}, Dropped: map[string]int64{},
		HTTP: map[HTTPResponse]int64{}, Passed: map[string]int64{}}}
}

var _ scenarios.Recorder = (*Recorder)(nil)

// Tally is a copy of the counts so far.
func (r *Recorder) Tally() Tally {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.t
	t.Failed, t.Throttled, t.Dropped = cloneMap(r.t.Failed), cloneMap(r.t.Throttled), cloneMap(r.t.Dropped)
	t.HTTP, t.Passed = cloneMap(r.t.HTTP), cloneMap(r.t.Passed)
	t.Slowest, t.FailedAt = slices.Clone(r.t.Slowest), slices.Clone(r.t.FailedAt)
	return t
}

func cloneMap[K comparable](m map[K]int64) map[K]int64 {
	out := make(map[K]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// add changes the tally under the lock.
func (r *Recorder) add(change func(t *Tally)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	change(&r.t)
}

// The Recorder's methods count what they are told in its Tally.

// HTTPResponse counts a response by endpoint and code.
func (r *Recorder) HTTPResponse(endpoint string, code int) {
	r.add(func(t *Tally) { t.HTTP[HTTPResponse{endpoint, code}]++ })
}

// Connected counts a connect and the phases it spent time in.
func (r *Recorder) Connected(timing clientconn.ConnectTiming) {
	r.add(func(t *Tally) {
		t.Connects++
		for i, d := range timing {
			if d > 0 {
				t.Passed[clientconn.ConnectPhases[i]]++
			}
		}
	})
}

// RoundTrip counts a round trip.
func (r *Recorder) RoundTrip(time.Duration) { r.add(func(t *Tally) { t.RoundTrips++ }) }

// BytesSent adds n bytes sent.
func (r *Recorder) BytesSent(n int) { r.add(func(t *Tally) { t.BytesSent += int64(n) }) }

// BytesReceived adds n bytes received.
func (r *Recorder) BytesReceived(n int) { r.add(func(t *Tally) { t.BytesReceived += int64(n) }) }

// Sent counts a message sent.
func (r *Recorder) Sent(time.Duration) { r.add(func(t *Tally) { t.Sent++ }) }

// Delivered counts a delivery: a repeat, or a first one (reordered or
// not, with a hub time or not, among the slowest or not).
func (r *Recorder) Delivered(d scenarios.Delivery) {
	r.add(func(t *Tally) {
		switch {
		case d.Duplicate:
			t.Duplicated++
			return
		case d.Reordered:
			t.Reordered++
		}
		t.Received++
		if d.HasHubTime {
			t.HubTimes++
		}
		if d.Slowest {
			t.Slowest = append(t.Slowest, d)
		}
	})
}

// Event counts an event by its kind, and by reason where it has one.
func (r *Recorder) Event(e scenarios.Event) {
	r.add(func(t *Tally) {
		switch e.Kind {
		case scenarios.ConnectionOpened:
			t.Opened++
		case scenarios.ConnectionClosed:
			t.Closed++
		case scenarios.ConnectionFailed:
			t.Failed[e.Reason]++
			t.FailedAt = append(t.FailedAt, time.Now())
		case scenarios.ConnectionDropped:
			t.Dropped[e.Reason]++
		case scenarios.Reconnected:
			t.Reconnected++
		case scenarios.Throttled:
			t.Throttled[e.Reason]++
		case scenarios.MessagesLost:
			t.Lost += int64(e.Count)
		}
	})
}
