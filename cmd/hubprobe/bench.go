package main

import (
	"context"
	"fmt"
	"io"

	"github.com/alecthomas/kingpin/v2"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/bench"
)

// benchCmd is `hubprobe bench`: a simple-mode file of the azure-signalr-bench
// repository, run as the benchmark runs it or imported as a hubprobe
// configuration.
type benchCmd struct {
	clause   *kingpin.CmdClause
	file     string
	output   string
	doImport bool
}

func addBenchCommand(app *kingpin.Application) *benchCmd {
	b := &benchCmd{}
	b.clause = app.Command("bench", "Run a simple-mode file of the azure-signalr-bench repository unchanged and print its report; "+
		"exit 0 when every step met p99 < 1 s with nothing lost.")
	b.clause.Arg("file", "The benchmark's YAML file (mode: simple).").Required().StringVar(&b.file)
	b.clause.Flag("output", "Report format: text or json.").Default("text").EnumVar(&b.output, "text", "json")
	b.clause.Flag("import", "Print the hubprobe configuration that runs the same test as a scheduled capacity search, and exit.").BoolVar(&b.doImport)
	return b
}

// run reads the file (exit 2 when it is bad), prints its warnings, then
// imports it or runs it; a run exits 1 when a step missed the objective.
func (b *benchCmd) run(ctx context.Context, stdout, stderr io.Writer, log zerolog.Logger) int {
	plan, err := bench.Load(b.file)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe: bad benchmark file:", err)
		return exitUsage
	}
	for _, w := range plan.Warnings {
		fmt.Fprintln(stderr, "hubprobe: warning:", w)
	}
	if b.doImport {
		if err := plan.Import(stdout); err != nil {
			fmt.Fprintln(stderr, "hubprobe:", err)
			return exitFailed
		}
		return exitOK
	}
	rep, err := plan.Run(ctx, log)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe: bad benchmark file:", err)
		return exitUsage
	}
	if err := rep.Write(stdout, b.output); err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	if !rep.Passed() {
		return exitFailed
	}
	return exitOK
}
