package main

import (
	"fmt"
	"io"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
)

func check(g globalFlags, stdout, stderr io.Writer) int {
	cfg, err := config.LoadOrDefault(g.configFile, scenarios.Kinds())
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe: bad configuration:", err)
		return exitUsage
	}
	name := g.configFile
	if name == "" {
		name = config.DefaultFilename + " (embedded default)"
	}
	fmt.Fprintf(stdout, "%s: OK, %d targets, %d scenarios\n", name, len(cfg.Targets), len(cfg.Scenarios))
	return exitOK
}
