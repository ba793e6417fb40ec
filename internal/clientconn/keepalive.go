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
type KeepAlive struct {
	started   time.Time
	lastWrite atomic.Int64 // nanoseconds since started, monotonic
	interval  time.Duration
	ping      func()

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// Start counts the connection as just written and arms the timer: ping
// runs, on the timer's goroutine, each time the connection was idle for
// interval. ping writes the protocol's ping with its own timeout; when it
// fails the connection either ended (Stop follows) or lost its write turn
// to a stuck writer, and the next interval tries again.
func (k *KeepAlive) Start(interval time.Duration, ping func()) {
	k.started, k.interval, k.ping = time.Now(), interval, ping
	k.MarkWritten()
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.stopped {
		k.timer = time.AfterFunc(interval, k.tick)
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
	if idle := k.idle(); idle < k.interval {
		k.rearm(k.interval - idle)
		return
	}
	k.ping()
	k.rearm(k.interval)
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
