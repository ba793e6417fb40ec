package main

import (
	"fmt"
	"io"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
)

// loadConfig reads the file named by --config.file, or the embedded default.
func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Parse(config.DefaultYAML, config.DefaultFilename, scenarios.Kinds())
	}
	return config.Load(path, scenarios.Kinds())
}

func check(g globalFlags, stdout, stderr io.Writer) int {
	cfg, err := loadConfig(g.configFile)
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
