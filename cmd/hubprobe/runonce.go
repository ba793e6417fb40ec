package main

import (
	"context"
	"fmt"
	"io"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/daemon"
	"github.com/hubprobe/hubprobe/scenarios/runreport"
)

// runOnce runs one scenario, prints its report and turns the verdict into
// the exit code. A shard with none of the scenario's connections has
// nothing to run.
func runOnce(ctx context.Context, g globalFlags, f runFlags, stdout, stderr io.Writer, log zerolog.Logger) int {
	shard, err := f.shard.shard()
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitUsage
	}
	cfg, ok := loadConfig(g, stderr)
	if !ok {
		return exitUsage
	}
	sc, ok := cfg.Scenario(f.scenario)
	if !ok {
		fmt.Fprintf(stderr, "hubprobe: no scenario named %q in the configuration\n", f.scenario)
		return exitUsage
	}
	if shard.Share(sc.Connections) == 0 {
		fmt.Fprintf(stderr, "hubprobe: shard %d of %d has none of scenario %q's %d connections: nothing to run\n",
			shard.Index, shard.Count, sc.Name, sc.Connections)
		return exitOK
	}
	once, err := daemon.NewOnce(ctx, cfg, *sc, daemon.Options{Logger: log, Shard: shard, EventHandlerAddr: f.eventHandlerListen})
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	defer once.Close()
	verdict, err := once.Run(ctx, stdout, f.output, f.plotFile)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	return verdictExit[verdict]
}

// verdictExit is the exit code of each verdict.
var verdictExit = map[runreport.Verdict]int{
	runreport.VerdictMet:          exitOK,
	runreport.VerdictMissed:       exitFailed,
	runreport.VerdictInconclusive: exitInconclusive,
}
