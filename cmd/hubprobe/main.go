// Command hubprobe is an always-on canary for realtime messaging hubs: it
// runs scaled-down benchmark scenarios on a schedule and exports what they
// measure as Prometheus metrics. main only parses flags and wires packages.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes: 1 when a run missed its objective or the daemon failed, 2 for
// bad usage or configuration.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := kingpin.New("hubprobe", "Canary for SignalR and Web PubSub hubs: scheduled benchmark scenarios exported as Prometheus metrics.")
	app.Version(version)
	app.HelpFlag.Short('h')
	app.UsageWriter(stderr)
	app.ErrorWriter(stderr)
	app.Terminate(nil)

	var g globalFlags
	app.Flag("config.file", "hubprobe configuration file; without it the embedded default (reference hub + default scenarios) runs.").StringVar(&g.configFile)
	app.Flag("log.level", "Only log messages with the given severity or above: debug, info, warn, error.").Default("info").EnumVar(&g.logLevel, "debug", "info", "warn", "error")
	app.Flag("log.format", "Output format of log messages: logfmt or json.").Default("logfmt").EnumVar(&g.logFormat, "logfmt", "json")

	serveCmd := app.Command("serve", "Run the canary daemon (default).").Default()
	webFlags := kingpinflag.AddFlags(serveCmd, ":9754")

	runCmd := app.Command("run", "Run one scenario once and print a report; exit 0 when it met p99 < 1 s with nothing lost "+
		"(for a capacity_search scenario: print every step, exit 0 when a capacity was found).")
	scenario := runCmd.Flag("scenario", "Name of the scenario to run.").Required().String()
	output := runCmd.Flag("output", "Report format: text or json.").Default("text").Enum("text", "json")
	plotFile := runCmd.Flag("plot.file", "For a capacity_search scenario: write the plot of throughput and p99 per step (SVG) to this file.").String()

	hubCmd := app.Command("hub", "Serve the reference hub standalone.")
	var hf hubFlags
	hubCmd.Flag("listen", "Address the hub listens on.").Default("127.0.0.1:5050").StringVar(&hf.listen)
	hubCmd.Flag("metrics", "Serve the hub's own metrics at /metrics on the same address.").Default("true").BoolVar(&hf.metrics)
	hubCmd.Flag("delivery-delay", "Hold every delivery back by this long (rehearse latency alerts).").Default("0s").DurationVar(&hf.delay)
	hubCmd.Flag("access-key-file", "Also emulate Azure SignalR Service and Azure Web PubSub (client endpoints and REST APIs) with the access key in this file.").StringVar(&hf.accessKeyFile)
	hubCmd.Flag("units", "Refuse connections past units × 1000, like the service's Standard tier (0: no quota).").Default("0").IntVar(&hf.units)
	hubCmd.Flag("connection-quota", "Refuse connections past this many (overrides --units; 0 keeps it).").Default("0").IntVar(&hf.connectionQuota)
	hubCmd.Flag("message-rate-limit", "Accept at most this many messages per second (0: no limit).").Default("0").Float64Var(&hf.messageRateLimit)
	hubCmd.Flag("redirect-negotiate", "Make negotiate redirect to the emulated service, as an app server in default mode does (needs --access-key-file).").BoolVar(&hf.redirectNegotiate)
	hubCmd.Flag("webpubsub.event-handler", "Web PubSub emulation: send user events to this event handler URL template ({hub}, {event}) as CloudEvents (needs --access-key-file).").StringVar(&hf.wpsEventHandler)
	hubCmd.Flag("poll-timeout", "How long a Long Polling request waits for data before it is answered empty.").Default("90s").DurationVar(&hf.pollTimeout)

	checkCmd := app.Command("check", "Check a configuration file and exit.")

	planCmd := app.Command("plan", "Size an Azure SignalR Service or Web PubSub tier for a workload, by the vendor's performance guide.")
	planFile := planCmd.Flag("workload.file", "Workload file (YAML) listing the scenarios to size for; see docs/tiers.md.").Required().String()
	planOutput := planCmd.Flag("output", "Plan format: text or json.").Default("text").Enum("text", "json")

	cmd, err := app.Parse(args)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitUsage
	}
	if cmd == "" { // --help or --version already printed
		return exitOK
	}
	logger := newLogger(stderr, g.logLevel, g.logFormat)
	switch cmd {
	case runCmd.FullCommand():
		return runOnce(ctx, g, *scenario, *output, *plotFile, stdout, stderr, logger)
	case hubCmd.FullCommand():
		return serveHub(ctx, hf, stderr, logger)
	case checkCmd.FullCommand():
		return check(g, stdout, stderr)
	case planCmd.FullCommand():
		return planCommand(*planFile, *planOutput, stdout, stderr)
	default:
		return serve(ctx, g, webFlags, stderr, logger)
	}
}

type globalFlags struct {
	configFile string
	logLevel   string
	logFormat  string
}
