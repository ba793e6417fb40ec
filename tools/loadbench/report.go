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
	// maxProbeOverJSClient bounds the probe's CPU against the official
	// JavaScript client measured in the same run, both against the
	// third-party server (-peer).
	maxProbeOverJSClient = 0.6
	// maxProbeSwitches bounds the probe's voluntary context switches per
	// round trip: at a canary's rates wake-ups are most of its cost.
	maxProbeSwitches = 1.0
)

// Pair names, in the order they run, and the heads of their columns.
const (
	pairFloor              = "floor"
	pairHubprobe           = "hubprobe"
	pairWebPubSub          = "webpubsub"
	pairClassic            = "classic"
	pairHubprobeThirdParty = "hubprobe-3p"
	pairJSClient           = "jsclient"
)

var pairTitle = map[string]string{
	pairFloor:              "floor (gorilla echo)",
	pairHubprobe:           "hubprobe (run + hub)",
	pairWebPubSub:          "hubprobe Web PubSub upstream echo (run + hub + event handler)",
	pairClassic:            "hubprobe classic ASP.NET SignalR WebSocket echo (run + hub)",
	pairHubprobeThirdParty: "hubprobe run + philippseith server",
	pairJSClient:           "@microsoft/signalr (Node, deflate off) + philippseith server",
}

// summary holds the medians of each pair that ran, by pair name.
type summary map[string]figures

func summarize(r benchResult) summary {
	by := map[string][]figures{}
	for _, m := range r.runs {
		by[m.pair] = append(by[m.pair], figuresOf(m, r.opts))
	}
	s := summary{}
	for name, fs := range by {
		s[name] = medians(fs)
	}
	return s
}

// ratioColumn is a column of one pair's medians over another's.
type ratioColumn struct{ title, over, under string }

// ratioColumns are the ratios worth printing among the pairs that ran.
func ratioColumns(pairs []string) []ratioColumn {
	cols := []ratioColumn{{"hubprobe / floor", pairHubprobe, pairFloor}}
	if slices.Contains(pairs, pairWebPubSub) {
		cols = append(cols, ratioColumn{"Web PubSub / hubprobe", pairWebPubSub, pairHubprobe})
	}
	if slices.Contains(pairs, pairClassic) {
		cols = append(cols, ratioColumn{"classic / hubprobe", pairClassic, pairHubprobe})
	}
	if slices.Contains(pairs, pairJSClient) {
		cols = append(cols, ratioColumn{"hubprobe / JS client, both + philippseith", pairHubprobeThirdParty, pairJSClient})
	}
	return cols
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
	p("\n### Every run\n\n| run | pair | client CPU-s / 1k | server CPU-s / 1k | client / server voluntary switches per RT | client KiB/conn | server KiB/conn | p50 ms | p99 ms | round trips | lost | max send lag ms | other load, cores |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, m := range r.runs {
		f := figuresOf(m, o)
		p("| %d | %s | %.3f | %.3f | %.2f / %.2f | %.1f | %.1f | %.2f | %.2f | %.0f | %.0f | %.1f | %.2f |\n", i/len(r.pairs)+1, m.pair,
			f[clientCPU], f[serverCPU], f[clientSwitches], f[serverSwitches], f[clientKiBPeak], f[serverKiBPeak], f[p50ms], f[p99ms], f[roundTrips], f[lost], f[maxSendLagMs], f[otherLoad])
	}
	p("\n### Targets\n\n| target | measured | verdict |\n|---|---|---|\n")
	for _, v := range verdicts(s) {
		p("| %s | %s | %s |\n", v.target, v.measured, v.verdict)
	}
}

// writeMedians prints the medians of every pair that ran and the ratios
// of ratioColumns.
func writeMedians(w io.Writer, r benchResult, s summary) {
	cols := ratioColumns(r.pairs)
	head, rule := "| figure |", "|---|"
	for _, name := range r.pairs {
		head, rule = head+" "+pairTitle[name]+" |", rule+"---:|"
	}
	for _, c := range cols {
		head, rule = head+" "+c.title+" |", rule+"---:|"
	}
	fmt.Fprintf(w, "%s\n%s\n", head, rule)
	for i, info := range figureInfo {
		row := "| " + info.label + " |"
		for _, name := range r.pairs {
			row += fmt.Sprintf(" "+info.format+" |", s[name][i])
		}
		for _, c := range cols {
			row += " " + ratio(s[c.over][i], s[c.under][i], i) + " |"
		}
		fmt.Fprintln(w, row)
	}
}

type verdict struct{ target, measured, verdict string }

func verdicts(s summary) []verdict {
	probe, fl := s[pairHubprobe][clientCPU], s[pairFloor][clientCPU]
	hub, flSrv := s[pairHubprobe][serverCPU], s[pairFloor][serverCPU]
	mem, switches := s[pairHubprobe][clientKiBPeak], s[pairHubprobe][clientSwitches]
	v := []verdict{
		{fmt.Sprintf("probe CPU ≤ %.1f× floor client", maxProbeOverFloor),
			fmt.Sprintf("%.3f vs %.3f CPU-s / 1k = %.2f×", probe, fl, probe/fl), bound(probe/fl, maxProbeOverFloor)},
		{fmt.Sprintf("probe CPU below the best peer client (%.2f–%.2f)", bestPeerClientCPULo, bestPeerClientCPUHi),
			fmt.Sprintf("%.3f CPU-s / 1k", probe), peerVerdict(probe)},
		{fmt.Sprintf("probe memory < %.0f KiB / connection", maxProbeKiBPerConn),
			fmt.Sprintf("%.1f KiB / connection (peak)", mem), bound(mem, maxProbeKiBPerConn)},
		{fmt.Sprintf("hub CPU ≤ %.0f× floor server", maxHubOverFloor),
			fmt.Sprintf("%.3f vs %.3f CPU-s / 1k = %.2f×", hub, flSrv, hub/flSrv), bound(hub/flSrv, maxHubOverFloor)},
		{fmt.Sprintf("probe voluntary context switches ≤ %.0f / round trip", maxProbeSwitches),
			fmt.Sprintf("%.2f / round trip", switches), bound(switches, maxProbeSwitches)},
	}
	if js, ok := s[pairJSClient]; ok {
		own := s[pairHubprobeThirdParty][clientCPU]
		v = append(v, verdict{fmt.Sprintf("probe CPU ≤ %.1f× the official JS client, both against philippseith", maxProbeOverJSClient),
			fmt.Sprintf("%.3f vs %.3f CPU-s / 1k = %.2f×", own, js[clientCPU], own/js[clientCPU]), bound(own/js[clientCPU], maxProbeOverJSClient)})
	}
	return v
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
