package main

import (
	"context"
	"fmt"
	"io"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
)

// runOnce runs one scenario, prints its report and turns the capacity
// verdict into the exit code. A capacity_search scenario runs its search
// instead (see runCapacity); plotFile names where its plot goes.
func runOnce(ctx context.Context, g globalFlags, name, output, plotFile string, stdout, stderr io.Writer, log zerolog.Logger) int {
	cfg, err := loadConfig(g.configFile)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe: bad configuration:", err)
		return exitUsage
	}
	var found bool
	for _, s := range cfg.Scenarios {
		found = found || s.Name == name
	}
	if !found {
		fmt.Fprintf(stderr, "hubprobe: no scenario named %q in the configuration\n", name)
		return exitUsage
	}
	metrics, err := exporter.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	hubs := newEmbeddedHubs(ctx, log, func(string, func() float64) {}, func(string) {})
	defer hubs.close()
	if err := hubs.sync(cfg); err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	d := &daemon{log: log, metrics: metrics, hubs: hubs}
	for _, s := range cfg.Scenarios {
		if s.Name != name {
			continue
		}
		runner, err := d.runnerFor(cfg, s)
		if err != nil {
			fmt.Fprintln(stderr, "hubprobe:", err)
			return exitFailed
		}
		if s.Mode == config.ModeCapacitySearch {
			return runCapacity(ctx, runner, output, plotFile, stdout, stderr)
		}
		runCtx, cancel := context.WithTimeout(ctx, s.Timeout)
		res := runner.Run(runCtx)
		cancel()
		if err := writeRunReport(res, s, output, stdout); err != nil || !res.MetSLO() {
			return exitFailed
		}
	}
	return exitOK
}
