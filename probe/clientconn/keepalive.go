package clientconn

import (
	"sync"
	"sync/atomic"
	"time"
)

// KeepAlive pings a connection on which nothing was written for a whole
// interval, as both hub protocols ask of a client. Writes only stamp the
// time; a timer rather than a goroutine re-arms itself for the next moment
// the connection can have been idle that long, which keeps idle connections
// cheap. The zero value is inert until Start.
//
// The same timer measures the connection's round trip (MeasureEvery), so
// that costs a connection no timer or goroutine of its own either.
type KeepAlive struct {
	started   time.Time
	lastWrite atomic.Int64 // nanoseconds since started, monotonic
	interval  time.Duration
	ping      func()

	// measure, when set, runs every measureEvery; measureAt is when next,
	// since started. Only the timer's goroutine touches measureAt once
	// Start armed it: ticks never overlap, each re-arms when done.
	measure      func()
	measureEvery time.Duration
	measureAt    time.Duration

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// DefaultRoundTripInterval is how often both clients measure their
// transport's round trip when their options leave it unset: often enough
// that each delivery has a recent one to be set against, seldom enough
// that the pings cost little beside the messages (a 1,000-connection echo
// at one message per connection per second sends one ping per 5,000
// messages).
const DefaultRoundTripInterval = 5 * time.Second

// MeasureEvery makes the timer also run measure as soon as Start is
// called and then every every, however busy the connection, on the
// timer's goroutine. Call it before Start.
func (k *KeepAlive) MeasureEvery(every time.Duration, measure func()) {
	k.measure, k.measureEvery = measure, every
}

// Start counts the connection as just written and arms the timer: ping
// runs, on the timer's goroutine, each time the connection was idle for
// interval. ping writes the protocol's ping with its own timeout; when it
// fails the connection either ended (Stop follows) or lost its write turn
// to a stuck writer, and the next interval tries again.
func (k *KeepAlive) Start(interval time.Duration, ping func()) {
	k.started, k.interval, k.ping = time.Now(), interval, ping
	k.MarkWritten()
	first := interval
	if k.measure != nil {
		first = 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.stopped {
		k.timer = time.AfterFunc(first, k.tick)
	}
}

// MarkWritten records a write: the idle time starts again.
func (k *KeepAlive) MarkWritten() { k.lastWrite.Store(int64(time.Since(k.started))) }

// Stop ends the pings for good; a tick already running does not re-arm.
func (k *KeepAlive) Stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
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
	k.ping()
	k.rearm(k.untilNext(k.interval))
}

func (k *KeepAlive) measureIfDue() {
	if k.measure == nil {
		return
	}
	if now := time.Since(k.started); now >= k.measureAt {
		k.measure()
		k.measureAt = now + k.measureEvery
	}
}

// untilNext is the sooner of the keep-alive's next moment and the next
// measurement.
func (k *KeepAlive) untilNext(keepAlive time.Duration) time.Duration {
	if k.measure == nil {
		return keepAlive
	}
	return min(keepAlive, max(k.measureAt-time.Since(k.started), 0))
}

func (k *KeepAlive) idle() time.Duration {
	return time.Since(k.started) - time.Duration(k.lastWrite.Load())
}

func (k *KeepAlive) rearm(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.stopped {
		k.timer.Reset(d)
	}
}
