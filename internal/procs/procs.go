// Package procs runs the process on one processor, and lets a small heap
// grow further between collections, while it is nearly idle, as an
// always-on canary is, and on the runtime's defaults (the machine's cores,
// or the container's CPU limit; GOGC=100) as soon as it is busy.
//
// Why one processor: with more than one, every goroutine the network
// poller readies while another processor is idle wakes a second thread to
// look for work, which finds none and sleeps again: a futex call and a
// context switch per message at a canary's rates, and nothing gained. On
// one processor that thread does not exist.
//
// Why more headroom: an idle canary's live heap is a few MiB, so at
// GOGC=100 the runtime's 4 MiB minimum sets the pace and a collection runs
// every few MiB allocated, each paying a fixed cost (every goroutine's
// stack, the globals) that the small heap does not amortize. While idle,
// the heap may grow by 8 MiB past what was live (at most three times it)
// before a collection: half the collections, at most 4 MiB more, and
// nothing changes for a heap of 8 MiB or more, so memory per connection
// at scale stays as it was.
//
// A busy process, such as a capacity search or a 10,000-connection
// profile, needs every core, and gets the defaults back within a second.
// docs/performance.md has the measurements. The GOMAXPROCS and GOGC
// environment variables, when set, decide their own knob instead.
package procs

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/hubprobe/hubprobe/internal/grid"
	"github.com/rs/zerolog"
)

// tick is how often the process's CPU use is read (a variable for tests).
var tick = time.Second

const (
	// busyCores is the CPU use, in cores, over one tick that brings the
	// default back: the one processor a third busy, before its queue of
	// ready goroutines adds to the latencies the probe measures.
	busyCores = 0.3
	// idleCores is the CPU use under which, held for idleTicks in a row,
	// the process moves to one processor: a tenth of a core leaves that
	// processor mostly idle.
	idleCores = 0.1
	idleTicks = 10
	// idleHeadroom is how far an idle process's heap may grow past its
	// live size before a collection, up to maxIdleGCPercent;
	// defaultGCPercent is the runtime's own (GOGC unset).
	idleHeadroom     = 8 << 20
	maxIdleGCPercent = 200
	defaultGCPercent = 100
)

// idleGCPercent is the GOGC that lets a heap of live bytes grow by
// idleHeadroom, between the default and maxIdleGCPercent.
func idleGCPercent(live uint64) int {
	if live == 0 {
		return maxIdleGCPercent
	}
	return min(max(int(idleHeadroom*100/live), defaultGCPercent), maxIdleGCPercent)
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// sizer decides from each tick's CPU use whether the process is idle.
type sizer struct {
	idle  bool // sized for idleness now
	quiet int  // ticks in a row under idleCores
}

// observe takes one tick's CPU use in cores and reports whether the
// process turned idle or busy.
func (s *sizer) observe(cores float64) (change bool) {
	if s.idle {
		if cores > busyCores {
			s.idle, s.quiet = false, 0
			return true
		}
		return false
	}
	if cores >= idleCores {
		s.quiet = 0
		return false
	}
	s.quiet++
	if s.quiet < idleTicks {
		return false
	}
	s.idle, s.quiet = true, 0
	return true
}

// knobs are the settings the environment leaves to Run.
type knobs struct {
	procs     bool // GOMAXPROCS unset, and more than one processor by default
	gc        bool // GOGC unset
	oneProc   bool // what Run last set
	gcPercent int
}

func freeKnobs() knobs {
	return knobs{
		procs:     os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) > 1,
		gc:        os.Getenv("GOGC") == "",
		gcPercent: defaultGCPercent,
	}
}

// Run sizes the process to its load until ctx ends, then gives the
// runtime its defaults back. It returns at once when the environment sets
// both knobs (or one processor is the default and GOGC is set), or where
// the process's CPU time cannot be read.
func Run(ctx context.Context, log zerolog.Logger) {
	k := freeKnobs()
	if !k.procs && !k.gc {
		return
	}
	last, ok := cpuTime()
	if !ok {
		return
	}
	var s sizer
	// The ticks land on the process's grid, sharing its wake-ups.
	t := time.NewTimer(grid.UntilNext(tick))
	defer t.Stop()
	defer k.apply(false, 0, log)
	lastAt := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			t.Reset(grid.UntilNext(tick))
		}
		now, ok := cpuTime()
		if !ok {
			continue // no figure this tick: nothing to decide on
		}
		cores := (now - last).Seconds() / time.Since(lastAt).Seconds()
		last, lastAt = now, time.Now()
		if s.observe(cores) || s.idle {
			k.apply(s.idle, cores, log)
		}
	}
}

// apply sizes the free knobs for an idle or a busy process. While idle it
// runs every tick, as the live heap moves.
func (k *knobs) apply(idle bool, cores float64, log zerolog.Logger) {
	changed := false
	if k.procs && idle != k.oneProc {
		if idle {
			runtime.GOMAXPROCS(1)
		} else {
			runtime.SetDefaultGOMAXPROCS()
		}
		k.oneProc, changed = idle, true
	}
	gc := defaultGCPercent
	if idle {
		gc = idleGCPercent(liveHeap())
	}
	if k.gc && gc != k.gcPercent {
		debug.SetGCPercent(gc)
		k.gcPercent, changed = gc, true
	}
	if changed {
		log.Debug().Bool("idle", idle).Int("processors", runtime.GOMAXPROCS(0)).Int("gc_percent", k.gcPercent).
			Float64("cpu_cores", cores).Msg("process sized to the load")
	}
}
