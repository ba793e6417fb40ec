package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/scenarios"
)

// runOnce runs one scenario, prints its report and turns the capacity
// verdict into the exit code. A capacity_search scenario runs its search
// instead; f.plotFile names where its plot goes.
func runOnce(ctx context.Context, g globalFlags, f runFlags, stdout, stderr io.Writer, log zerolog.Logger) int {
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
	metrics, err := exporter.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	events, err := startEventHandler(log, metrics, f.eventHandlerListen)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	defer events.close()
	hubs := hub.NewEmbedded(ctx, log, nil)
	hubs.SetWebPubSubEventHandler(events.template)
	defer hubs.Close()
	if err := hubs.Sync(cfg); err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	job, err := scenarios.Resolver{Hubs: hubs, Recorder: metrics.ScenarioRecorder, Logger: log}.Job(cfg, cfg.Scenarios[i])
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	events.SetHubs(scenarios.EventHandlerKeys([]scenarios.Job{job}))
	return runJob(ctx, job.Runner, f, stdout, stderr)
}

// runJob runs the scenario within its timeout and prints the report. A
// search exits 0 when it finished and at least one step held: the capacity
// is then known.
func runJob(ctx context.Context, runner *scenarios.Runner, f runFlags, stdout, stderr io.Writer) int {
	runCtx, cancel := context.WithTimeout(ctx, runner.Scenario.Timeout)
	defer cancel()
	if runner.Scenario.Mode == config.ModeCapacitySearch {
		c := runner.SearchCapacity(runCtx)
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
	res := runner.Run(runCtx)
	switch err := scenarios.WriteRunReport(stdout, res, runner.Scenario, f.output); {
	case err != nil:
		return exitFailed
	case res.Outcome == scenarios.ResultInconclusive:
		return exitInconclusive
	case !res.MetSLO():
		return exitFailed
	}
	return exitOK
}
