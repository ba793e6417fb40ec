// Package procs runs the process on one processor while it is nearly idle,
// as an always-on canary is, and on the runtime's default number (the
// machine's cores, or the container's CPU limit) as soon as it is busy.
//
// Why: with more than one processor, every goroutine the network poller
// readies while another processor is idle wakes a second thread to look
// for work, which finds none and sleeps again: a futex call and a context
// switch per message at a canary's rates, and nothing gained. On one
// processor that thread does not exist. A busy process, such as a capacity
// search or a 10,000-connection profile, needs every core, and gets them
// back within a second. docs/performance.md has the measurements.
//
// The GOMAXPROCS environment variable, when set, decides instead.
package procs

import (
	"context"
	"os"
	"runtime"
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
)

// sizer decides from each tick's CPU use whether the process runs on one
// processor.
type sizer struct {
	one   bool // on one processor now
	quiet int  // ticks in a row under idleCores
}

// observe takes one tick's CPU use in cores and reports whether the
// number of processors should change.
func (s *sizer) observe(cores float64) (change bool) {
	if s.one {
		if cores > busyCores {
			s.one, s.quiet = false, 0
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
	s.one, s.quiet = true, 0
	return true
}

// Run sizes the processors until ctx ends, then gives the runtime its
// default back. It returns at once when GOMAXPROCS is set, when the
// default is one processor already, or where the process's CPU time
// cannot be read.
func Run(ctx context.Context, log zerolog.Logger) {
	if os.Getenv("GOMAXPROCS") != "" || runtime.GOMAXPROCS(0) == 1 {
		return
	}
	last, ok := cpuTime()
	if !ok {
		return
	}
	var s sizer
	t := time.NewTicker(tick)
	defer t.Stop()
	defer runtime.SetDefaultGOMAXPROCS()
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
			apply(s.one, cores, log)
		}
	}
}

// apply moves the process to one processor, or back to the default.
func apply(one bool, cores float64, log zerolog.Logger) {
	if one {
		runtime.GOMAXPROCS(1)
	} else {
		runtime.SetDefaultGOMAXPROCS()
	}
	log.Debug().Int("processors", runtime.GOMAXPROCS(0)).Float64("cpu_cores", cores).Msg("processors sized to the load")
}
