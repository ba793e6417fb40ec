package clientconn

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// WriteErrorGrace is how long a failed socket write waits for the read
// goroutine to give the better reason: a write usually fails because the
// server closed the connection, and the reader is about to say how (the
// server's goodbye may be waiting unread).
const WriteErrorGrace = 250 * time.Millisecond

// InternalWriteTimeout bounds a write a connection makes on its own
// behalf (a keep-alive or round-trip ping, a reply, an ack), which no
// caller's context bounds.
const InternalWriteTimeout = 10 * time.Second

// AcquireWrite waits for the write turn: writers take turns, and ctx or
// the connection's end gives up the wait. Hand the turn back with
// ReleaseWrite.
func (s *State) AcquireWrite(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case s.writeSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closing:
		return s.ClosedErr()
	}
	select {
	case <-s.closing:
		<-s.writeSem
		return s.ClosedErr()
	default:
		return nil
	}
}

// ReleaseWrite hands the write turn to the next writer.
func (s *State) ReleaseWrite() { <-s.writeSem }

// WriteGuard cuts off a write whose context gives up on it: abort must
// unblock the write by closing the transport, and end the connection, for
// a half-written frame cannot be taken back. A connection keeps one guard
// for all its writes. Writes take turns (State's write turn), so one is
// guarded at a time. A context that cannot end costs nothing.
//
// The guard stays with the context of its last write, which a run's sends
// all share, until another context's write or Stop: registering for every
// send (context.AfterFunc allocates and takes the context's lock) put
// allocations on the pacer's path, and with them a share of the garbage
// collector's work while sends fall due.
type WriteGuard struct {
	abort func()
	// mu orders the guard's moves between watches with Stop.
	mu      sync.Mutex
	watch   *contextWatch
	stopped bool
	phase   atomic.Int32 // guardIdle, guardWriting or guardAborted
}

const (
	guardIdle int32 = iota
	guardWriting
	guardAborted // the context ended during a write and abort ran
)

// Init sets the abort the guard runs. It is a method rather than a
// constructor so the guard can sit by value in the connection's struct.
func (g *WriteGuard) Init(abort func()) { g.abort = abort }

// Begin guards the write about to start under ctx. When ctx has ended
// already it returns ctx's error instead: the write must not start, and
// the connection stays whole. End a guard that began once its write
// returned.
func (g *WriteGuard) Begin(ctx context.Context) error {
	done := ctx.Done()
	if done == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if (g.watch == nil || g.watch.done != done) && !g.stopped {
		g.leaveLocked()
		g.watch = join(ctx, done, g)
	}
	select {
	case <-done: // its watch may have fired before the guard joined it
		return ctx.Err()
	default:
	}
	g.phase.Store(guardWriting)
	return nil
}

// End disarms the guard after the write under ctx returned. It returns
// nil, or aborted joined with ctx's error when abort ran.
func (g *WriteGuard) End(ctx context.Context, aborted error) error {
	if ctx.Done() == nil || g.phase.CompareAndSwap(guardWriting, guardIdle) {
		return nil
	}
	return fmt.Errorf("%w: %w", aborted, ctx.Err())
}

// Stop takes the guard off its context for good: the connection has
// ended, and a context that outlives it must not keep it.
func (g *WriteGuard) Stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	g.leaveLocked()
}

func (g *WriteGuard) leaveLocked() {
	if g.watch != nil {
		g.watch.leave(g)
		g.watch = nil
	}
}

// writeGrace is how long a write in progress when its context ends may
// still finish before it is cut off. A write into a socket with room
// returns within microseconds, and cutting it off would cost the
// connection, and the Close message it still owes the hub, for nothing:
// only a write the server makes no room for is cut off.
const writeGrace = 100 * time.Millisecond

// cutOffUnder aborts the write in progress under w's context, if it has
// not finished by deadline: between writes there is nothing to cut off,
// and a guard that has moved on to another context's watch since is left
// alone. abort runs with no lock held, for it may end the connection and
// with it the guard (Stop).
func (g *WriteGuard) cutOffUnder(w *contextWatch, deadline time.Time) {
	for g.phase.Load() == guardWriting && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	g.mu.Lock()
	hit := g.watch == w && g.phase.CompareAndSwap(guardWriting, guardAborted)
	g.mu.Unlock()
	if hit {
		g.abort()
	}
}

// contextWatch is one context's registration with context.AfterFunc,
// shared by the guards of every connection writing under it, so that a
// run's end wakes one goroutine, not one per connection.
type contextWatch struct {
	done   <-chan struct{}
	stop   func() bool
	mu     sync.Mutex // guards, against fire
	guards map[*WriteGuard]struct{}
}

// watches are the contexts guards write under, by Done channel: a context
// derived only with values ends with its parent, so one watch serves both.
// Its lock is taken before a watch's own.
var watches = struct {
	sync.Mutex
	byDone map[<-chan struct{}]*contextWatch
}{byDone: map[<-chan struct{}]*contextWatch{}}

// join adds g to ctx's watch, registering one if ctx has none yet.
func join(ctx context.Context, done <-chan struct{}, g *WriteGuard) *contextWatch {
	watches.Lock()
	defer watches.Unlock()
	w := watches.byDone[done]
	if w == nil {
		w = &contextWatch{done: done, guards: map[*WriteGuard]struct{}{}}
		watches.byDone[done] = w
		w.stop = context.AfterFunc(ctx, w.fire)
	}
	w.mu.Lock()
	w.guards[g] = struct{}{}
	w.mu.Unlock()
	return w
}

// leave takes g off the watch, and unregisters the watch when g was the
// last guard on it.
func (w *contextWatch) leave(g *WriteGuard) {
	watches.Lock()
	defer watches.Unlock()
	w.mu.Lock()
	delete(w.guards, g)
	last := len(w.guards) == 0
	w.mu.Unlock()
	if last && watches.byDone[w.done] == w {
		delete(watches.byDone, w.done)
		w.stop()
	}
}

// fire runs when the context ends: it cuts off the writes in progress
// under it that do not finish within writeGrace.
func (w *contextWatch) fire() {
	watches.Lock()
	if watches.byDone[w.done] == w {
		delete(watches.byDone, w.done)
	}
	watches.Unlock()
	w.mu.Lock()
	guards := make([]*WriteGuard, 0, len(w.guards))
	for g := range w.guards {
		guards = append(guards, g)
	}
	w.mu.Unlock()
	deadline := time.Now().Add(writeGrace)
	for _, g := range guards {
		g.cutOffUnder(w, deadline)
	}
}
