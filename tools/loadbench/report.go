package main

import (
	"fmt"
	"io"
)

// Targets hubprobe is held to, and the best peer client's cost at 1,000
// connections × 1 msg/s (the official JavaScript client with permessage-
// deflate off), measured on the same kind of 2-core machine.
const (
	maxProbeOverFloor   = 1.3
	maxHubOverFloor     = 2.0
	maxProbeKiBPerConn  = 32.0
	bestPeerClientCPULo = 0.19
	bestPeerClientCPUHi = 0.22
)

// summary holds the medians of each pair.
type summary struct{ floor, hubprobe figures }

func summarize(r benchResult) summary {
	var fl, hp []figures
	for _, m := range r.runs {
		if m.pair == "floor" {
			fl = append(fl, figuresOf(m, r.opts))
		} else {
			hp = append(hp, figuresOf(m, r.opts))
		}
	}
	return summary{floor: medians(fl), hubprobe: medians(hp)}
}

// writeReport prints the benchmark as markdown: medians with ratios, every
// run, and a verdict per target.
func writeReport(w io.Writer, r benchResult) {
	o, s := r.opts, summarize(r)
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("## loadbench: %d connections × 1 message / %s × %d B, %s window, %d runs\n\n", o.n, o.interval, o.size, o.window, o.runs)
	p("Load average (1/5/15 min) before: %s, after: %s. Figures are medians over the runs.\n", r.loadBefore, r.loadAfter)
	if r.discarded > 0 {
		p("%d runs were repeated because other processes kept more than %.2f cores busy during their window.\n", r.discarded, o.maxOther)
	}
	p("\n")
	p("| figure | floor (gorilla echo) | hubprobe (run + hub) | hubprobe / floor |\n|---|---:|---:|---:|\n")
	for i, info := range figureInfo {
		ratio := "—"
		if s.floor[i] > 0 && figure(i) < p50ms {
			ratio = fmt.Sprintf("%.2f×", s.hubprobe[i]/s.floor[i])
		}
		p("| %s | "+info.format+" | "+info.format+" | %s |\n", info.label, s.floor[i], s.hubprobe[i], ratio)
	}
	p("\n### Every run\n\n| run | pair | client CPU-s / 1k | server CPU-s / 1k | client KiB/conn | server KiB/conn | p50 ms | p99 ms | round trips | lost | other load, cores |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, m := range r.runs {
		f := figuresOf(m, o)
		p("| %d | %s | %.3f | %.3f | %.1f | %.1f | %.2f | %.2f | %.0f | %.0f | %.2f |\n", i/2+1, m.pair,
			f[clientCPU], f[serverCPU], f[clientKiBPeak], f[serverKiBPeak], f[p50ms], f[p99ms], f[roundTrips], f[lost], f[otherLoad])
	}
	p("\n### Targets\n\n| target | measured | verdict |\n|---|---|---|\n")
	for _, v := range verdicts(s) {
		p("| %s | %s | %s |\n", v.target, v.measured, v.verdict)
	}
}

type verdict struct{ target, measured, verdict string }

func verdicts(s summary) []verdict {
	probe, fl := s.hubprobe[clientCPU], s.floor[clientCPU]
	hub, flSrv := s.hubprobe[serverCPU], s.floor[serverCPU]
	mem := s.hubprobe[clientKiBPeak]
	return []verdict{
		{fmt.Sprintf("probe CPU ≤ %.1f× floor client", maxProbeOverFloor),
			fmt.Sprintf("%.3f vs %.3f CPU-s / 1k = %.2f×", probe, fl, probe/fl), bound(probe/fl, maxProbeOverFloor)},
		{fmt.Sprintf("probe CPU below the best peer client (%.2f–%.2f)", bestPeerClientCPULo, bestPeerClientCPUHi),
			fmt.Sprintf("%.3f CPU-s / 1k", probe), peerVerdict(probe)},
		{fmt.Sprintf("probe memory < %.0f KiB / connection", maxProbeKiBPerConn),
			fmt.Sprintf("%.1f KiB / connection (peak)", mem), bound(mem, maxProbeKiBPerConn)},
		{fmt.Sprintf("hub CPU ≤ %.0f× floor server", maxHubOverFloor),
			fmt.Sprintf("%.3f vs %.3f CPU-s / 1k = %.2f×", hub, flSrv, hub/flSrv), bound(hub/flSrv, maxHubOverFloor)},
	}
}

// bound says whether got is within limit and by how much.
func bound(got, limit float64) string {
	if got <= limit {
		return fmt.Sprintf("met (%.0f %% under)", (1-got/limit)*100)
	}
	return fmt.Sprintf("NOT met (%.0f %% over)", (got/limit-1)*100)
}

func peerVerdict(cpu float64) string {
	switch {
	case cpu < bestPeerClientCPULo:
		return fmt.Sprintf("met (%.0f %% below the range)", (1-cpu/bestPeerClientCPULo)*100)
	case cpu <= bestPeerClientCPUHi:
		return "NOT met (inside the peer's range)"
	default:
		return fmt.Sprintf("NOT met (%.0f %% above the range)", (cpu/bestPeerClientCPUHi-1)*100)
	}
}
