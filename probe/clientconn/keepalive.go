package clientconn

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/internal/grid"
)

// KeepAlive pings a connection on which nothing was written for a whole
// interval, as both hub protocols ask of a client. Writes only stamp the
// time; a timer rather than a goroutine re-arms itself for the next moment
// the connection can have been idle that long, which keeps idle connections
// cheap. The zero value is inert until Start.
//
// The same timer measures the connection's round trip (MeasureEvery), so
// that costs a connection no timer or goroutine of its own either. The
// keep-alive holds its connection as a KeepAliveConn rather than as two
// method values, which would be two more objects per connection.
//
// Every connection's timer fires on the process's grid of instants
// (internal/grid, at tickGrain): the runtime runs all timers due at the
// same instant in one pass, so a thousand connections' pings cost the
// process a few wake-ups a second rather than one each.
type KeepAlive struct {
	lastWrite atomic.Int64 // when, as grid.Now()
	interval  time.Duration
	grain     time.Duration // the grid the timer fires on
	conn      KeepAliveConn

	// measureEvery, when not 0, is how often the round trip is measured;
	// measuredAt is when last, on grid.Now's clock (measured says whether
	// ever); the next is due a budget's period later, reckoned at each tick
	// so that a crowd leaving shortens it again. Only the timer's goroutine
	// touches them once Start armed it: ticks never overlap, each re-arms
	// when done.
	measureEvery time.Duration
	measuredAt   time.Duration
	measured     bool
	// budget shares the process's round trips among its connections
	// (processRoundTrips when nil); counted is whether this connection is
	// one of them.
	budget  *roundTripBudget
	counted bool

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// KeepAliveConn is the connection a KeepAlive works on. Its methods run on
// the keep-alive's timer goroutine.
type KeepAliveConn interface {
	// KeepAlivePing writes the protocol's ping, with its own timeout. When
	// it fails the connection either ended (Stop follows) or lost its
	// write turn to a stuck writer, and the next interval tries again.
	KeepAlivePing()
	// MeasureRoundTrip measures the transport's round trip once, without
	// waiting for the answer: Start calls it on the dialing goroutine. A
	// WebSocket writes a ping whose pong the read goroutine times; an HTTP
	// transport times its request on a goroutine of its own.
	MeasureRoundTrip()
}

// DefaultRoundTripInterval is how often every client measures its
// transport's round trip when its options leave it unset: often enough
// that each delivery has a recent one to be set against. Every connection
// measures, so a connection sending once a second sends one ping per 5
// messages: a few bytes beside a message's kilobytes, but a write and a
// read on each side all the same (docs/performance.md). Past
// MaxRoundTripsPerSecond the process's connections measure less often.
const DefaultRoundTripInterval = 5 * time.Second

// MaxRoundTripsPerSecond is how many round trips the process's connections
// measure together at most, after each one's first: up to 1,000
// connections measuring every 5 s keep their interval; 10,000 measure
// every 50 s each rather than send 2,000 pings a second, which at one
// message a second each cost the probe and the hub 6-8 % of their CPU
// (docs/performance.md). A round trip is the state of the path the
// connections share, so few are needed. The budget is the whole
// process's: a big load on one target spaces the round trips to every
// other target too.
const MaxRoundTripsPerSecond = 200

// roundTripBudget counts the connections that measure their round trip
// and spaces each one's measurements so that together they stay within
// MaxRoundTripsPerSecond.
type roundTripBudget struct{ measuring atomic.Int64 }

// processRoundTrips is the budget every keep-alive of the process shares.
var processRoundTrips roundTripBudget

// period is how long a connection that asked to measure every every waits
// until its next measurement.
func (b *roundTripBudget) period(every time.Duration) time.Duration {
	return max(every, time.Duration(b.measuring.Load())*time.Second/MaxRoundTripsPerSecond)
}

// maxTickGrain is the most a keep-alive's or round-trip's tick is put off
// to land on the process's shared grid: nothing beside a 15 s keep-alive
// or a 5 s round trip, and the instants the send passes wake at too.
const maxTickGrain = grid.Coarse

// tickGrain is the grid for a keep-alive of interval measuring every
// measureEvery (0: not measuring): maxTickGrain, or an eighth of the
// shorter period when that is finer, so short periods stay precise.
func tickGrain(interval, measureEvery time.Duration) time.Duration {
	g := min(maxTickGrain, interval/8)
	if measureEvery > 0 {
		g = min(g, measureEvery/8)
	}
	return max(g, time.Millisecond)
}

// MeasureEvery makes the keep-alive also measure the connection's round
// trip (MeasureRoundTrip) in Start and then every every, on its timer,
// however busy the connection. Call it before Start.
func (k *KeepAlive) MeasureEvery(every time.Duration) { k.measureEvery = every }

// Start counts the connection as just written and arms the timer, which
// pings conn (KeepAlivePing) each time it was idle for interval.
func (k *KeepAlive) Start(interval time.Duration, conn KeepAliveConn) {
	k.interval, k.conn = interval, conn
	k.grain = tickGrain(interval, k.measureEvery)
	k.MarkWritten()
	if !k.join() {
		return
	}
	// The first round trip is measured here, on the caller, before the
	// connection's first message can be written: a WebSocket ping sent
	// ahead of a message is answered ahead of it, so even a connection's
	// first delivery has a round trip to be set against.
	k.measureIfDue()
	first := grid.Delay(grid.Now(), k.untilNext(interval), k.grain)
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.stopped {
		k.timer = time.AfterFunc(first, k.tick)
	}
}

// join counts a measuring connection in its budget, unless Stop came
// first; it reports whether the keep-alive is still to start.
func (k *KeepAlive) join() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return false
	}
	if k.measureEvery > 0 && !k.counted {
		if k.budget == nil {
			k.budget = &processRoundTrips
		}
		k.budget.measuring.Add(1)
		k.counted = true
	}
	return true
}

// MarkWritten records a write: the idle time starts again.
func (k *KeepAlive) MarkWritten() { k.lastWrite.Store(int64(grid.Now())) }

// Stop ends the pings for good; a tick already running does not re-arm.
func (k *KeepAlive) Stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	if k.counted {
		k.budget.measuring.Add(-1)
		k.counted = false
	}
	if k.timer != nil {
		k.timer.Stop()
	}
}

// tick pings when the connection was idle for a whole interval and re-arms
// the timer for the next moment that can happen.
func (k *KeepAlive) tick() {
	k.measureIfDue()
	if idle := k.idle(); idle < k.interval {
		k.rearm(k.untilNext(k.interval - idle))
		return
	}
	k.conn.KeepAlivePing()
	k.rearm(k.untilNext(k.interval))
}

func (k *KeepAlive) measureIfDue() {
	if k.measureEvery == 0 {
		return
	}
	if now := grid.Now(); !k.measured || now >= k.nextMeasure() {
		k.conn.MeasureRoundTrip()
		k.measuredAt, k.measured = now, true
	}
}

// nextMeasure is when the next round trip is due, with the budget as it
// stands now.
func (k *KeepAlive) nextMeasure() time.Duration {
	return k.measuredAt + k.budget.period(k.measureEvery)
}

// untilNext is the sooner of the keep-alive's next moment and the next
// measurement.
func (k *KeepAlive) untilNext(keepAlive time.Duration) time.Duration {
	if k.measureEvery == 0 {
		return keepAlive
	}
	return min(keepAlive, max(k.nextMeasure()-grid.Now(), 0))
}

func (k *KeepAlive) idle() time.Duration {
	return grid.Now() - time.Duration(k.lastWrite.Load())
}

func (k *KeepAlive) rearm(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.stopped {
		k.timer.Reset(grid.Delay(grid.Now(), d, k.grain))
	}
}
