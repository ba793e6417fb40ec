// Package procs runs the process on one processor, with a larger heap
// target, while it is nearly idle, as an always-on canary is, and on the
// runtime's defaults (the machine's cores, or the container's CPU limit;
// GOGC=100) as soon as it is busy.
//
// Why one processor: with more than one, every goroutine the network
// poller readies while another processor is idle wakes a second thread to
// look for work, which finds none and sleeps again: a futex call and a
// context switch per message at a canary's rates, and nothing gained. On
// one processor that thread does not exist.
//
// Why a larger heap target: an idle canary's live heap is a few MiB, so
// at GOGC=100 the runtime's 4 MiB minimum target sets the pace and a
// collection runs every few MiB allocated, each paying a fixed cost
// (every goroutine's stack, the globals) that the small heap does not
// amortize. Twice the target halves the collections for about 4 MiB more
// resident memory.
//
// A busy process, such as a capacity search or a 10,000-connection
// profile, needs every core and its memory per connection, and gets the
// defaults back within a second. docs/performance.md has the
// measurements. The GOMAXPROCS and GOGC environment variables, when set,
// decide their own knob instead.
package procs

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"time"

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
	// idleGCPercent is the heap target while idle; defaultGCPercent is the
	// runtime's own (GOGC unset).
	idleGCPercent    = 200
	defaultGCPercent = 100
)

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
	procs bool // GOMAXPROCS unset, and more than one processor by default
	gc    bool // GOGC unset
}

func freeKnobs() knobs {
	return knobs{
		procs: os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) > 1,
		gc:    os.Getenv("GOGC") == "",
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
	t := time.NewTicker(tick)
	defer t.Stop()
	defer k.apply(false, 0, log)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, ok := cpuTime()
		if !ok {
			continue // no figure this tick: nothing to decide on
		}
		cores := (now - last).Seconds() / tick.Seconds()
		last = now
		if s.observe(cores) {
			k.apply(s.idle, cores, log)
		}
	}
}

// apply sizes the free knobs for an idle or a busy process.
func (k knobs) apply(idle bool, cores float64, log zerolog.Logger) {
	switch {
	case k.procs && idle:
		runtime.GOMAXPROCS(1)
	case k.procs:
		runtime.SetDefaultGOMAXPROCS()
	}
	switch {
	case k.gc && idle:
		debug.SetGCPercent(idleGCPercent)
	case k.gc:
		debug.SetGCPercent(defaultGCPercent)
	}
	log.Debug().Bool("idle", idle).Int("processors", runtime.GOMAXPROCS(0)).Float64("cpu_cores", cores).Msg("process sized to the load")
}
