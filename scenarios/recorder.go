package scenarios

import (
	"time"

	"github.com/hubprobe/hubprobe/internal/clientconn"
)

// Recorder receives what a scenario run measures. The exporter implements it
// with Prometheus metrics; `hubprobe run` and tests use others. A Recorder is
// bound to one (target, scenario) pair and must be safe for concurrent use:
// every method is called from many connection goroutines at once, so
// implementations keep each call cheap and non-blocking.
type Recorder interface {
	// HTTPResponse, BytesSent and BytesReceived make a Recorder a clientconn.Observer.
	HTTPResponse(endpoint string, code int)
	BytesSent(n int)
	BytesReceived(n int)

	MessageSent()
	MessageReceived(latency time.Duration)
	MessagesLost(n int)
	MessageDuplicated()
	MessageReordered()
	// SendLag is how late the pacer sent a message against its schedule.
	SendLag(lag time.Duration)
	Throttled(reason string)

	ConnectDone(d time.Duration)
	ConnectionFailed(reason string)
	ConnectionOpened()
	ConnectionClosed()
	Reconnected()

	RunFinished(r Result)
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
	// SlowMessages is how many deliveries took 1 s or more.
	SlowMessages int64
	Latency      Quantiles
	// LatencySum adds up the latency of every delivery of the run.
	LatencySum time.Duration
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
