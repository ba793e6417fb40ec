package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/scenarios"
)

// runCapacity runs a capacity_search scenario once, prints its step table
// (or JSON) and writes the plot when asked. It exits 0 when the search
// finished and at least one step held: the capacity is then known.
func runCapacity(ctx context.Context, runner *scenarios.Runner, output, plotFile string, stdout, stderr io.Writer) int {
	runCtx, cancel := context.WithTimeout(ctx, runner.Scenario.Timeout)
	c := runner.SearchCapacity(runCtx)
	cancel()
	var err error
	if output == "json" {
		err = c.WriteJSON(stdout)
	} else {
		err = c.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	if plotFile != "" && len(c.Steps) > 0 {
		if err := writePlot(c, plotFile); err != nil {
			fmt.Fprintln(stderr, "hubprobe: writing the plot:", err)
			return exitFailed
		}
		if output != "json" {
			fmt.Fprintf(stdout, "  Plot: %s\n", plotFile)
		}
	}
	if _, held := c.Found(); !c.Measured() || !held {
		return exitFailed
	}
	return exitOK
}

func writePlot(c scenarios.Capacity, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := c.WritePlot(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeRunReport prints one run, with what its profile resolved to.
func writeRunReport(res scenarios.Result, s config.Scenario, output string, w io.Writer) error {
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			scenarios.JSONReport
			Profile string `json:"profile,omitempty"`
		}{res.Report(), s.ProfileSummary()})
	}
	if err := res.WriteText(w); err != nil {
		return err
	}
	if p := s.ProfileSummary(); p != "" {
		_, err := fmt.Fprintf(w, "  Profile: %s\n", p)
		return err
	}
	return nil
}

// applyTiers exports the published limits of every target that declares a
// tier and drops those of targets that no longer do.
func applyTiers(m *exporter.Metrics, cfg *config.Config) {
	declared := map[string]bool{}
	for _, t := range cfg.Targets {
		if t.Tier == nil {
			continue
		}
		limits, err := t.Tier.Limits()
		if err != nil {
			continue // Load checked the tier; only a hand-built config gets here
		}
		declared[t.Name] = true
		m.SetTier(t.Name, limits)
	}
	for target := range m.Tiers() {
		if !declared[target] {
			m.RemoveTier(target)
		}
	}
}
