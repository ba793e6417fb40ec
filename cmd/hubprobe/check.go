package main

import (
	"fmt"
	"io"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/slo/specs"
)

func check(g globalFlags, stdout, stderr io.Writer) int {
	cfg, ok := loadConfig(g, stderr)
	if !ok {
		return exitUsage
	}
	name := g.configFile
	if name == "" {
		name = config.DefaultFilename + " (embedded default)"
	}
	fmt.Fprintf(stdout, "%s: OK, %d targets, %d scenarios\n", name, len(cfg.Targets), len(cfg.Scenarios))
	return exitOK
}

// loadConfig reads the configuration file the flags name, or the embedded
// default without one. A bad one is said on stderr, and ok is false: a
// usage error.
func loadConfig(g globalFlags, stderr io.Writer) (cfg *config.Config, ok bool) {
	cfg, err := config.LoadOrDefault(g.configFile, scenarios.Kinds())
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe: bad configuration:", err)
		return nil, false
	}
	return cfg, true
}

// writeSLOs prints the configuration's objectives in format: exit 2 for a
// configuration with none, 1 when the output fails.
func writeSLOs(g globalFlags, format string, stdout, stderr io.Writer) int {
	cfg, ok := loadConfig(g, stderr)
	if !ok {
		return exitUsage
	}
	objectives, err := specs.Objectives(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe: bad configuration:", err)
		return exitUsage
	}
	if err := specs.Write(stdout, format, objectives); err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	return exitOK
}
