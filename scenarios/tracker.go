package scenarios

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios/internal/ledger"
)

// SlowThreshold is the capacity definition's line: a delivery at or above
// it counts against the 99 % budget.
const SlowThreshold = time.Second

// tracker accounts for one run's deliveries. Counts are atomics because
// every connection's read goroutine reports into it; only the exact-quantile
// histogram takes a lock.
type tracker struct {
	rec Recorder

	sent, expected, received, slow atomic.Int64
	duplicated, reordered          atomic.Int64
	paused                         atomic.Int64 // sends that fell due while the target was paused
	sentBytes, receivedBytes       atomic.Int64
	maxLag, latencySum             atomic.Int64
	slowest                        atomic.Int64 // the run's slowest delivery with an exemplar, nanoseconds
	closed                         atomic.Bool

	ids *ledger.Ledger
	// roundTrips holds each connection's latest transport round trip, in
	// nanoseconds; 0 until one is measured.
	roundTrips []atomic.Int64
	// runID and first name deliveries: the run, and the index among all
	// the scenario's connections of this shard's first.
	runID string
	first int
	// restSends: the kind sends through the REST API (set as it prepares),
	// so a message's way up is not on any connection of the run.
	restSends atomic.Bool

	mu         sync.Mutex
	latencies  DurationHistogram
	sendLags   DurationHistogram
	rtts       DurationHistogram
	hubTimes   DurationHistogram
	scheduled  int64              // sends the schedule held
	made       int64              // sends the pacer made before the window closed
	window     time.Duration      // from the first scheduled send to the pacer's end
	batches    *DurationHistogram // time to a batch's last message; nil without batches
	throttled  map[string]int64
	drops      map[string]int64
	reconnects int64
}

func newTracker(rec Recorder, clients int) *tracker {
	return &tracker{
		rec:        rec,
		ids:        ledger.New(clients),
		roundTrips: make([]atomic.Int64, clients),
		throttled:  map[string]int64{},
		drops:      map[string]int64{},
	}
}

// sentMessage records a send that expects the given number of deliveries.
func (t *tracker) sentMessage(expected int, lag time.Duration) {
	t.sent.Add(1)
	t.expected.Add(int64(expected))
	t.rec.Sent(lag)
	t.mu.Lock()
	t.sendLags.Record(lag)
	t.mu.Unlock()
	for {
		old := t.maxLag.Load()
		if int64(lag) <= old || t.maxLag.CompareAndSwap(old, int64(lag)) {
			break
		}
	}
}

// delivered records that receiver got message id, at position pos of its
// sender's stream. A message seen again counts as duplicated and not as
// received; one behind a later message of the same sender counts as
// received and reordered; an identity the run never gave out is ignored.
// Deliveries after the drain ended are ignored too: those messages are
// already counted lost. fresh tells whether the delivery was counted.
func (t *tracker) delivered(receiver int, id, pos uint64, latency time.Duration) (fresh bool) {
	if t.closed.Load() {
		return false
	}
	seen := t.ids.See(receiver, id, pos)
	switch seen {
	case ledger.Unknown:
		return false
	case ledger.Duplicate:
		t.duplicated.Add(1)
		t.rec.Delivered(Delivery{Duplicate: true})
		return false
	}
	d := t.delivery(receiver, id, latency)
	if seen == ledger.Reordered {
		t.reordered.Add(1)
		d.Reordered = true
	}
	t.countDelivery(d)
	return true
}

// delivery describes a fresh delivery of message id to receiver; both
// indices were checked by the ledger's See.
func (t *tracker) delivery(receiver int, id uint64, latency time.Duration) Delivery {
	latency = max(latency, 0)
	sender, seq := ledger.SplitMessageID(id)
	d := Delivery{Latency: latency, RunID: t.runID, Sender: t.first + sender, Seq: seq, Slowest: t.raiseSlowest(latency)}
	if network, ok := t.networkShare(sender, receiver); ok {
		d.HubTime, d.HasHubTime = max(latency-network, 0), true
	}
	return d
}

// networkShare is the part of a message's latency its transport took:
// half the sender's latest round trip for the way up, half the
// receiver's for the way down, so an echo (one connection both ways) is
// charged its round trip, and a fan-out each end's one-way share. A REST
// send goes up from hubprobe's REST client, on the same network path as
// the receiving connection, so both halves are the receiver's. ok is
// false while either end has no round trip measured.
func (t *tracker) networkShare(sender, receiver int) (network time.Duration, ok bool) {
	down := t.roundTrips[receiver].Load()
	up := down
	if !t.restSends.Load() {
		up = t.roundTrips[sender].Load()
	}
	if up == 0 || down == 0 {
		return 0, false
	}
	return time.Duration(up+down) / 2, true
}

// slowestStep is how much slower than the slowest delivery so far one
// must be to carry an exemplar: the native histogram's bucket factor, so
// a run hangs exemplars on its slowest buckets, a few dozen at most,
// however its latency climbs.
const slowestStep = 1.1

// raiseSlowest reports whether latency is slowestStep times the run's
// slowest delivery with an exemplar (the first delivery always is), and
// makes it the new one.
func (t *tracker) raiseSlowest(latency time.Duration) bool {
	for {
		old := t.slowest.Load()
		if old > 0 && float64(latency) < float64(old)*slowestStep {
			return false
		}
		if t.slowest.CompareAndSwap(old, max(int64(latency), 1)) {
			return true
		}
	}
}

func (t *tracker) countDelivery(d Delivery) {
	t.received.Add(1)
	if d.Latency >= SlowThreshold {
		t.slow.Add(1)
	}
	t.latencySum.Add(int64(d.Latency))
	t.rec.Delivered(d)
	t.mu.Lock()
	t.latencies.Record(d.Latency)
	if d.HasHubTime {
		t.hubTimes.Record(d.HubTime)
	}
	t.mu.Unlock()
}

// keepRoundTrips takes each connection's latest round trip from prev, the
// tracker of the same connections before: a held connection's next
// report charges the network's share from its first delivery on.
func (t *tracker) keepRoundTrips(prev *tracker) {
	for i := range min(len(t.roundTrips), len(prev.roundTrips)) {
		t.roundTrips[i].Store(prev.roundTrips[i].Load())
	}
}

// roundTrip records connection conn's latest transport round trip.
func (t *tracker) roundTrip(conn int, d time.Duration) {
	d = max(d, time.Nanosecond)
	t.roundTrips[conn].Store(int64(d))
	t.rec.RoundTrip(d)
	t.mu.Lock()
	t.rtts.Record(d)
	t.mu.Unlock()
}

// batchDone records the time to the last message of a batch; like
// delivered, not after the drain ended.
func (t *tracker) batchDone(latency time.Duration) {
	if t.closed.Load() {
		return
	}
	t.mu.Lock()
	t.batches.Record(latency) // set: only server_push calls this
	t.mu.Unlock()
}

func (t *tracker) throttle(reason string) {
	t.rec.Event(Event{Kind: Throttled, Reason: reason})
	t.mu.Lock()
	t.throttled[reason]++
	t.mu.Unlock()
}

// dropped counts a connection that ended without the probe asking.
func (t *tracker) dropped(reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drops[reason]++
}

// reconnected counts a held connection back after a drop.
func (t *tracker) reconnected() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reconnects++
}

// paced records what one pacing window did: the sends its schedule held,
// the sends it made before it closed, and how long it lasted.
func (t *tracker) paced(scheduled, made int64, window time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.scheduled += scheduled
	t.made += made
	t.window += window
}

// complete reports whether every expected delivery arrived.
func (t *tracker) complete() bool { return t.received.Load() >= t.expected.Load() }

// close stops counting deliveries and records what never came as lost:
// received counts each expected message once, so the difference is exactly
// the expected deliveries never seen.
func (t *tracker) close() (lost int64) {
	t.closed.Store(true)
	lost = max(t.expected.Load()-t.received.Load(), 0)
	if lost > 0 {
		t.rec.Event(Event{Kind: MessagesLost, Count: int(lost)})
	}
	return lost
}

func (t *tracker) fill(r *Result) {
	r.Sent, r.Expected, r.Received = t.sent.Load(), t.expected.Load(), t.received.Load()
	r.SlowMessages = t.slow.Load()
	r.Duplicated, r.Reordered = t.duplicated.Load(), t.reordered.Load()
	r.Paused = t.paused.Load()
	r.SentBytes, r.ReceivedBytes = t.sentBytes.Load(), t.receivedBytes.Load()
	r.MaxSendLag = time.Duration(t.maxLag.Load())
	r.LatencySum = time.Duration(t.latencySum.Load())
	t.mu.Lock()
	defer t.mu.Unlock()
	r.Throttled, r.Drops, r.Reconnects = maps.Clone(t.throttled), maps.Clone(t.drops), t.reconnects
	r.Latency = t.latencies.Quantiles()
	r.SendLag = t.sendLags.Quantiles()
	r.RoundTrip, r.RoundTrips = t.rtts.Quantiles(), t.rtts.Count()
	r.HubTime, r.HubTimes = t.hubTimes.Quantiles(), t.hubTimes.Count()
	r.Scheduled, r.Unsent, r.SendWindow = t.scheduled, t.scheduled-t.made, t.window
	if t.batches != nil {
		r.Batches, r.BatchLatency = t.batches.Count(), t.batches.Quantiles()
	}
}

// countBatches makes the tracker keep times to last message (server_push).
func (t *tracker) countBatches() { t.batches = &DurationHistogram{} }

// observer adapts the tracker to clientconn.Observer, counting this run's
// bytes and round trips as well as forwarding them to the recorder. Each
// connection has its own, conn its index, so its round trips are its own;
// the REST clients' observer has conn -1 and reports responses only.
type observer struct {
	t    *tracker
	conn int
}

// restObserver is the observer of the run's REST clients.
func restObserver(t *tracker) observer { return observer{t: t, conn: -1} }

func (o observer) HTTPResponse(endpoint string, code int) { o.t.rec.HTTPResponse(endpoint, code) }
func (o observer) Connected(timing clientconn.ConnectTiming) {
	o.t.rec.Connected(timing)
}
func (o observer) RoundTrip(d time.Duration) {
	if o.conn >= 0 {
		o.t.roundTrip(o.conn, d)
	}
}
func (o observer) BytesSent(n int) {
	o.t.sentBytes.Add(int64(n))
	o.t.rec.BytesSent(n)
}
func (o observer) BytesReceived(n int) {
	o.t.receivedBytes.Add(int64(n))
	o.t.rec.BytesReceived(n)
}
