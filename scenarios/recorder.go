package scenarios

import (
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// Recorder is what a run reports while it runs: the engine's whole
// outward contract besides the Result a run returns. The exporter
// implements it with Prometheus metrics, Discard drops everything. A
// Recorder is bound to one (target, scenario) pair and must be safe for
// concurrent use: every method is called from many connection goroutines
// at once, so implementations keep each call cheap and non-blocking.
type Recorder interface {
	// A Recorder is every connection's clientconn.Observer: HTTP responses,
	// bytes, connect timings (each phase, which add up to the connect)
	// and transport round trips.
	clientconn.Observer

	// Sent is a message the hub took, sent lag late for its schedule.
	Sent(lag time.Duration)
	// Delivered is an expected message arriving at one receiver: for the
	// first time, or again (Delivery.Duplicate).
	Delivered(d Delivery)
	// Event is whatever else befalls the run's connections and messages,
	// all of it rare next to sends and deliveries.
	Event(e Event)
}

// EventKind says what an Event is.
type EventKind uint8

// The kinds of Event.
const (
	// ConnectionOpened is a connection that completed its handshake.
	ConnectionOpened EventKind = iota + 1
	// ConnectionClosed is a connection the run closed.
	ConnectionClosed
	// ConnectionFailed is a connection that failed or was dropped, for
	// Event.Reason, one of the Fail* reasons.
	ConnectionFailed
	// ConnectionDropped is a connection that ended without the probe
	// asking, for Event.Reason, one of clientconn.DropReasons, after
	// Event.Duration open.
	ConnectionDropped
	// Reconnected is a connection that came back after it dropped;
	// Event.Duration, when set, is how long from the drop until a message
	// arrived on it again.
	Reconnected
	// Throttled is the hub throttling the probe, for Event.Reason, one of
	// throttle.Reasons.
	Throttled
	// MessagesLost is Event.Count expected deliveries that never came.
	MessagesLost
)

// Event is one of the rare things a run reports; Kind says which, and
// which of the other fields it sets.
type Event struct {
	Kind     EventKind
	Reason   string
	Count    int
	Duration time.Duration
}

// Discard is a Recorder that records nothing, for runs whose Result is
// all that counts (`hubprobe run`, `hubprobe bench`).
var Discard Recorder = discard{}

// Discarding gives every scenario Discard: the Resolver's Recorder for
// runs whose Result is all that counts.
func Discarding(config.Scenario) Recorder { return Discard }

type discard struct{}

func (discard) HTTPResponse(string, int)           {}
func (discard) Connected(clientconn.ConnectTiming) {}
func (discard) RoundTrip(time.Duration)            {}
func (discard) BytesSent(int)                      {}
func (discard) BytesReceived(int)                  {}
func (discard) Sent(time.Duration)                 {}
func (discard) Delivered(Delivery)                 {}
func (discard) Event(Event)                        {}

// Delivery is one expected message arriving at its receiver: what a
// Recorder is told of it.
type Delivery struct {
	// Duplicate marks a message the receiver had seen already: it counts
	// as duplicated only, and the fields below are not set.
	Duplicate bool
	// Reordered marks a first delivery behind a later message of the same
	// sender to the same receiver; it counts as received too.
	Reordered bool
	// Latency is from the send to the receipt.
	Latency time.Duration
	// HubTime is Latency less the network's share of it (Run.networkShare):
	// the time the hub itself took. HasHubTime is false while a connection
	// on the message's path has no round trip measured yet.
	HubTime    time.Duration
	HasHubTime bool
	// Slowest marks a delivery slower by a tenth than every one before it
	// in the run, the native histogram's bucket width: the ones worth an
	// exemplar.
	Slowest bool
	// RunID, Sender (the sending connection's index among all the
	// scenario's) and Seq (the sender's sequence number) name the message.
	RunID  string
	Sender int
	Seq    uint32
}

// Connection failure reasons, the bounded values of
// hubprobe_connection_failures_total{reason}. The first four are the
// client's connect phases, so a failed connect is counted under the phase
// it failed in.
const (
	FailNegotiate = clientconn.PhaseNegotiate
	FailTransport = clientconn.PhaseTransport
	FailHandshake = clientconn.PhaseHandshake
	FailTimeout   = clientconn.PhaseTimeout
	FailThrottled = "throttled"
	FailClosed    = "closed"
	// FailAuth is a connection that could not get its token because
	// signing in to Microsoft Entra ID failed.
	FailAuth = "auth"
)

// Run outcomes, the values of hubprobe_runs_total{result}.
const (
	ResultSuccess = "success"
	ResultFailure = "failure"
	ResultSkipped = "skipped"
	// ResultInconclusive is a run the probe could not drive: it fell
	// behind its own schedule, so what it measured is not the hub's.
	ResultInconclusive = "inconclusive"
)

// Quantiles are exact per-run latency quantiles.
type Quantiles struct {
	P50 time.Duration `json:"-"`
	P90 time.Duration `json:"-"`
	P99 time.Duration `json:"-"`
	Max time.Duration `json:"-"`
}

// Result is the outcome of one scenario run.
type Result struct {
	Target   string
	Scenario string
	Kind     string
	// RunID names the run: the scenario and its scheduled start, the same
	// on every shard. The status page serves the run at /runs/{RunID}.
	RunID    string
	Start    time.Time
	Duration time.Duration

	Connections int // connections that completed the handshake
	Sent        int64
	Received    int64 // distinct expected deliveries seen, fan-out counted per receiver
	Expected    int64 // deliveries that should have been seen
	Lost        int64 // expected deliveries never seen
	// Duplicated counts deliveries of a message the receiver had already
	// seen; Reordered, deliveries behind a later message of the same sender
	// to the same receiver (they count as received too).
	Duplicated    int64
	Reordered     int64
	SentBytes     int64
	ReceivedBytes int64
	Throttled     map[string]int64
	// Drops counts the connections that ended without the probe asking,
	// by reason (clientconn.DropReasons); Reconnects the held connections
	// that came back after a drop.
	Drops      map[string]int64
	Reconnects int64
	// Away counts the messages of held connections that fell due while
	// their connection was away and went out once it was back; of them,
	// AwayLate arrived (late) and AwayLost never did.
	Away, AwayLate, AwayLost int64
	// SlowMessages is how many deliveries took 1 s or more.
	SlowMessages int64
	Latency      Quantiles
	// LatencySum adds up the latency of every delivery of the run.
	LatencySum time.Duration
	// RoundTrip holds the quantiles of the transport round trips the run's
	// connections measured, HubTime those of its deliveries' hub time
	// (Delivery.HubTime); RoundTrips and HubTimes count them.
	RoundTrip  Quantiles
	RoundTrips int64
	HubTime    Quantiles
	HubTimes   int64
	// MaxSendLag is the pacer's worst lateness in this run, SendLag the
	// quantiles of its lateness over every send.
	MaxSendLag time.Duration
	SendLag    Quantiles
	// Scheduled is how many sends the schedule held; Unsent, how many of
	// them the pacer had not made when its window closed (the probe fell
	// behind, or sends blocked). SendWindow is how long sending lasted:
	// the denominator of the run's rates.
	Scheduled int64
	Unsent    int64
	// Paused counts the sends that fell due while the target was throttling
	// and so were never sent; each is in Throttled too.
	Paused     int64
	SendWindow time.Duration
	// Batches is how many server_push batches had their last message
	// arrive; BatchLatency holds the quantiles of their time from request
	// to last message (every message's own latency is in Latency).
	Batches      int64
	BatchLatency Quantiles

	// Outcome is ResultSuccess, ResultFailure or ResultSkipped.
	Outcome string
	// Error says why a run failed; it never holds secrets.
	Error string
}

// MetSLO reports whether the run met the capacity definition: 99 % of
// messages under 1 s and nothing lost.
func (r Result) MetSLO() bool {
	if r.Outcome != ResultSuccess || r.Lost > 0 || r.Received == 0 {
		return false
	}
	return r.SlowMessages*100 <= r.Received
}
