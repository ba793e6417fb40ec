package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/webpubsub/eventhandler"
)

// runOnce runs one scenario, prints its report and turns the capacity
// verdict into the exit code. A capacity_search scenario runs its search
// instead; f.plotFile names where its plot goes. A shard of a sharded
// scenario waits for the scenario's next scheduled instant, so that every
// shard's run starts together.
func runOnce(ctx context.Context, g globalFlags, f runFlags, stdout, stderr io.Writer, log zerolog.Logger) int {
	shard, err := f.shard.shard()
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitUsage
	}
	cfg, err := loadConfig(g.configFile)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe: bad configuration:", err)
		return exitUsage
	}
	i := slices.IndexFunc(cfg.Scenarios, func(s config.Scenario) bool { return s.Name == f.scenario })
	if i < 0 {
		fmt.Fprintf(stderr, "hubprobe: no scenario named %q in the configuration\n", f.scenario)
		return exitUsage
	}
	if sc := cfg.Scenarios[i]; shard.Share(sc.Connections) == 0 {
		fmt.Fprintf(stderr, "hubprobe: shard %d of %d has none of scenario %q's %d connections: nothing to run\n",
			shard.Index, shard.Count, sc.Name, sc.Connections)
		return exitOK
	}
	metrics, err := exporter.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	events, err := eventhandler.Serve(log, metrics, f.eventHandlerListen)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	defer events.Close()
	hubs := hub.NewEmbedded(ctx, log, nil)
	hubs.SetWebPubSubEventHandler(events.Template)
	defer hubs.Close()
	if err := hubs.Sync(cfg); err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	resolver := scenarios.Resolver{Hubs: hubs, Recorder: metrics.ScenarioRecorder, Logger: log, Shard: shard}
	job, err := resolver.Job(cfg, cfg.Scenarios[i])
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	events.SetHubs(scenarios.EventHandlerKeys([]scenarios.Job{job}))
	at, ok := job.Runner.WaitForStart(ctx, log)
	if !ok {
		return exitFailed
	}
	return runJob(ctx, job.Runner, at, f, stdout, stderr)
}

// runJob runs the scenario from at within its timeout and prints the
// report. A search exits 0 when it finished and at least one step held: the
// capacity is then known. A shard with no senders has nothing to miss.
func runJob(ctx context.Context, runner *scenarios.Runner, at time.Time, f runFlags, stdout, stderr io.Writer) int {
	runCtx, cancel := context.WithDeadline(ctx, at.Add(runner.Scenario.Timeout))
	defer cancel()
	if runner.Scenario.Mode == config.ModeCapacitySearch {
		c := runner.SearchCapacityAt(runCtx, at)
		if err := scenarios.WriteCapacityReport(stdout, c, f.output, f.plotFile); err != nil {
			fmt.Fprintln(stderr, "hubprobe:", err)
			return exitFailed
		}
		if c.StopReason == scenarios.StopProbeSaturated {
			return exitInconclusive
		}
		if _, held := c.Found(); !c.Measured() || !held {
			return exitFailed
		}
		return exitOK
	}
	res := runner.RunAt(runCtx, at)
	switch err := scenarios.WriteRunReport(stdout, res, runner.Scenario, f.output); {
	case err != nil:
		return exitFailed
	case res.Outcome == scenarios.ResultInconclusive:
		return exitInconclusive
	case !res.MetSLO() && !(res.Outcome == scenarios.ResultSuccess && runner.Senders() == 0):
		return exitFailed
	}
	return exitOK
}
