package main

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// report prints the samples' course and the verdicts, and returns 1 when
// one of them failed.
func report(w io.Writer, s settings, samples []sample) int {
	if len(samples) < 4 {
		fmt.Fprintf(w, "only %d samples: not enough to judge\n", len(samples))
		return 1
	}
	fmt.Fprintln(w, "| at | RSS MB | goroutines | held sent | held drops | lost |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|")
	for _, sm := range samples {
		fmt.Fprintf(w, "| %s | %.1f | %.0f | %.0f | %v | %v |\n", sm.at.Round(time.Second), sm.rss/1e6, sm.goroutines, sm.sent, sorted(sm.drops), sorted(sm.lost))
	}
	failed := 0
	for _, v := range []verdict{flat("RSS", samples, func(sm sample) float64 { return sm.rss }),
		flat("goroutines", samples, func(sm sample) float64 { return sm.goroutines }),
		dropsExplained(s, samples[len(samples)-1]), lostOnlyAtDrops(s, samples[len(samples)-1])} {
		fmt.Fprintf(w, "%s: %s\n", map[bool]string{true: "ok", false: "FAILED"}[v.ok], v.said)
		if !v.ok {
			failed = 1
		}
	}
	return failed
}

type verdict struct {
	ok   bool
	said string
}

// flat compares the highest figure of the last third with the highest of
// the second (the first is the warm-up): within 10 %, or 2 for small counts.
func flat(what string, samples []sample, of func(sample) float64) verdict {
	third := len(samples) / 3
	peak := func(list []sample) float64 {
		m := 0.0
		for _, sm := range list {
			m = max(m, of(sm))
		}
		return m
	}
	middle, last := peak(samples[third:2*third]), peak(samples[2*third:])
	ok := last <= middle*1.1 || last-middle <= 2
	return verdict{ok, fmt.Sprintf("%s peaked at %.4g in the middle third and %.4g in the last", what, middle, last)}
}

// dropsExplained wants every drop of the held connections to be the
// drill's: the reason a close allowing reconnect gives, about one per
// drill period.
func dropsExplained(s settings, last sample) verdict {
	total := 0.0
	for _, n := range last.drops {
		total += n
	}
	drills := float64(s.duration / s.every)
	ok := total == last.drops[clientconn.DropServerReconnect] && total >= drills-2 && total <= drills+1
	return verdict{ok, fmt.Sprintf("%.0f drops %v for about %.0f drills", total, sorted(last.drops), drills)}
}

// lostOnlyAtDrops wants no message lost but the held scenario's, and of
// its at most one a drop: the one its connection had in flight.
func lostOnlyAtDrops(s settings, last sample) verdict {
	drops, others := 0.0, 0.0
	for _, n := range last.drops {
		drops += n
	}
	for scenario, n := range last.lost {
		if scenario != "held" {
			others += n
		}
	}
	ok := others == 0 && last.lost["held"] <= drops
	return verdict{ok, fmt.Sprintf("%.0f held messages lost for %.0f drops, %.0f lost elsewhere", last.lost["held"], drops, others)}
}

func sorted(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := ""
	for _, k := range keys {
		out += fmt.Sprintf("%s=%.0f ", k, m[k])
	}
	return out
}
