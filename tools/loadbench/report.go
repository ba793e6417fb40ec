package main

import (
	"fmt"
	"io"
	"slices"
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

// Pair names, in the order they run, and the heads of their columns.
const (
	pairFloor     = "floor"
	pairHubprobe  = "hubprobe"
	pairWebPubSub = "webpubsub"
)

var pairTitle = map[string]string{
	pairFloor:     "floor (gorilla echo)",
	pairHubprobe:  "hubprobe (run + hub)",
	pairWebPubSub: "hubprobe Web PubSub upstream echo (run + hub + event handler)",
}

// summary holds the medians of each pair; webPubSub only when it ran.
type summary struct{ floor, hubprobe, webPubSub figures }

func summarize(r benchResult) summary {
	by := map[string][]figures{}
	for _, m := range r.runs {
		by[m.pair] = append(by[m.pair], figuresOf(m, r.opts))
	}
	return summary{floor: medians(by[pairFloor]), hubprobe: medians(by[pairHubprobe]), webPubSub: medians(by[pairWebPubSub])}
}

// ratio prints a / b, or a dash where it means nothing.
func ratio(a, b float64, i int) string {
	if b > 0 && figure(i) < p50ms {
		return fmt.Sprintf("%.2f×", a/b)
	}
	return "—"
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
	writeMedians(w, r, s)
	p("\n### Every run\n\n| run | pair | client CPU-s / 1k | server CPU-s / 1k | client / server voluntary switches per RT | client KiB/conn | server KiB/conn | p50 ms | p99 ms | round trips | lost | other load, cores |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, m := range r.runs {
		f := figuresOf(m, o)
		p("| %d | %s | %.3f | %.3f | %.2f / %.2f | %.1f | %.1f | %.2f | %.2f | %.0f | %.0f | %.2f |\n", i/len(r.pairs)+1, m.pair,
			f[clientCPU], f[serverCPU], f[clientSwitches], f[serverSwitches], f[clientKiBPeak], f[serverKiBPeak], f[p50ms], f[p99ms], f[roundTrips], f[lost], f[otherLoad])
	}
	p("\n### Targets\n\n| target | measured | verdict |\n|---|---|---|\n")
	for _, v := range verdicts(s) {
		p("| %s | %s | %s |\n", v.target, v.measured, v.verdict)
	}
}

// writeMedians prints the medians of every pair with the ratios to the
// floor, and the Web PubSub pair's to the SignalR one when it ran.
func writeMedians(w io.Writer, r benchResult, s summary) {
	wps := slices.Contains(r.pairs, pairWebPubSub)
	head, rule := "| figure | "+pairTitle[pairFloor]+" | "+pairTitle[pairHubprobe]+" |", "|---|---:|---:|"
	if wps {
		head, rule = head+" "+pairTitle[pairWebPubSub]+" |", rule+"---:|"
	}
	head, rule = head+" hubprobe / floor |", rule+"---:|"
	if wps {
		head, rule = head+" Web PubSub / hubprobe |", rule+"---:|"
	}
	fmt.Fprintf(w, "%s\n%s\n", head, rule)
	for i, info := range figureInfo {
		row := fmt.Sprintf("| %s | "+info.format+" | "+info.format+" |", info.label, s.floor[i], s.hubprobe[i])
		if wps {
			row += fmt.Sprintf(" "+info.format+" |", s.webPubSub[i])
		}
		row += " " + ratio(s.hubprobe[i], s.floor[i], i) + " |"
		if wps {
			row += " " + ratio(s.webPubSub[i], s.hubprobe[i], i) + " |"
		}
		fmt.Fprintln(w, row)
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
