package main

import (
	"fmt"
	"io"

	"github.com/hubprobe/hubprobe/tiers"
)

// planCommand sizes a tier for the workload file with the vendor guide's
// method and prints the plan as text or JSON. Exit 0 when a tier holds the
// workload, 1 when none does (or output failed), 2 for bad input.
func planCommand(workloadFile string, output string, stdout, stderr io.Writer) int {
	if output != "text" && output != "json" {
		fmt.Fprintf(stderr, "hubprobe: --output must be text or json, got %q\n", output)
		return exitUsage
	}
	rec, err := tiers.PlanFile(workloadFile)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe: bad workload:", err)
		return exitUsage
	}
	if err := rec.Write(stdout, output, workloadFile); err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	if !rec.Fits {
		return exitFailed
	}
	return exitOK
}
