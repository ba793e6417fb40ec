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
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/internal/procs"
	"github.com/hubprobe/hubprobe/scenarios/runreport"
	"github.com/hubprobe/hubprobe/slo/specs"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes: 1 when a run missed its objective or the daemon failed, 2 for
// bad usage or configuration.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	// exitInconclusive: the probe could not drive the run (it fell behind
	// its own schedule), so the hub was not measured.
	exitInconclusive = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI(stdout, stderr)
	cmd, code, done := c.parse(args, stderr)
	if done {
		return code
	}
	logger := newLogger(stderr, c.global.logLevel, c.global.logFormat)
	if cmd != c.checkCmd.FullCommand() && cmd != c.planCmd.FullCommand() {
		go procs.Run(ctx, logger) // the commands that run a while
	}
	switch cmd {
	case c.runCmd.FullCommand():
		return runOnce(ctx, c.global, c.runFlags, stdout, stderr, logger)
	case c.hubCmd.FullCommand():
		return serveHub(ctx, c.hubFlags, stderr, logger)
	case c.checkCmd.FullCommand():
		return check(c.global, stdout, stderr)
	case c.planCmd.FullCommand():
		return planCommand(c.planFlags.workloadFile, c.planFlags.output, stdout, stderr)
	case c.sloCmd.FullCommand():
		return writeSLOs(c.global, c.sloFormat, stdout, stderr)
	case c.bench.clause.FullCommand():
		return c.bench.run(ctx, stdout, stderr, logger)
	default:
		return serve(ctx, c.global, c.web, c.serveFlags, stderr, logger)
	}
}

type globalFlags struct {
	configFile string
	logLevel   string
	logFormat  string
}

// runFlags are the settings of `hubprobe run`.
type runFlags struct {
	scenario string
	output   string
	plotFile string
	shard    shardFlags
	// eventHandlerListen is where the Web PubSub event handler also
	// listens, for a service that is not embedded; empty: loopback only.
	eventHandlerListen string
}

// planFlags are the settings of `hubprobe plan`.
type planFlags struct {
	workloadFile string
	output       string
}

// cli is the command line: every command and where its flags land.
type cli struct {
	app        *kingpin.Application
	global     globalFlags
	web        *web.FlagConfig
	serveFlags serveSettings
	runFlags   runFlags
	hubFlags   hubFlags
	planFlags  planFlags
	bench      *benchCmd
	sloFormat  string

	runCmd, hubCmd, checkCmd, planCmd, sloCmd *kingpin.CmdClause
}

// newCLI declares the commands. Help and --version go to stdout, errors to
// stderr.
func newCLI(stdout, stderr io.Writer) *cli {
	c := &cli{app: kingpin.New("hubprobe", "Canary for SignalR and Web PubSub hubs: scheduled benchmark scenarios exported as Prometheus metrics.")}
	c.app.Version(buildInfo().String())
	c.app.HelpFlag.Short('h')
	c.app.UsageWriter(stdout)
	c.app.ErrorWriter(stderr)
	c.addGlobalFlags()
	serveCmd := c.app.Command("serve", "Run the canary daemon (default).").Default()
	c.web = kingpinflag.AddFlags(serveCmd, ":9754")
	c.addServeFlags(serveCmd)
	c.addRunCommand()
	c.addHubCommand()
	c.checkCmd = c.app.Command("check", "Check a configuration file and exit.")
	c.addPlanCommand()
	c.sloCmd = c.app.Command("slo", "Print the configuration's objectives for sloth, pyrra or OpenSLO.")
	c.sloCmd.Flag("format", "SLO tool: "+strings.Join(specs.Formats, ", ")+".").Required().EnumVar(&c.sloFormat, specs.Formats...)
	c.bench = addBenchCommand(c.app)
	return c
}

// terminated is what kingpin's terminate handler panics with: where kingpin
// would end the process (after help or the version), parse returns instead,
// so that nothing runs with flags whose defaults were never applied.
type terminated struct{ code int }

// parse parses args. done is true when nothing is left to run: kingpin
// answered (help, version) or the args are bad; code is the exit code then.
func (c *cli) parse(args []string, stderr io.Writer) (cmd string, code int, done bool) {
	defer func() {
		if r := recover(); r != nil {
			t, ok := r.(terminated)
			if !ok {
				panic(r)
			}
			cmd, code, done = "", exitOK, true
			if t.code != 0 {
				code = exitUsage
			}
		}
	}()
	c.app.Terminate(func(code int) { panic(terminated{code}) })
	cmd, err := c.app.Parse(args)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return "", exitUsage, true
	}
	return cmd, exitOK, false
}

func (c *cli) addGlobalFlags() {
	g := &c.global
	c.app.Flag("config.file", "hubprobe configuration file; without it the embedded default (reference hub + default scenarios) runs.").StringVar(&g.configFile)
	c.app.Flag("log.level", "Only log messages with the given severity or above: debug, info, warn, error.").Default("info").EnumVar(&g.logLevel, "debug", "info", "warn", "error")
	c.app.Flag("log.format", "Output format of log messages: logfmt or json.").Default("logfmt").EnumVar(&g.logFormat, "logfmt", "json")
}

func (c *cli) addRunCommand() {
	cmd := c.app.Command("run", "Run one scenario once and print a report; exit 0 when it met p99 < 1 s with nothing lost "+
		"(for a capacity_search scenario: print every step, exit 0 when a capacity was found).")
	c.runCmd = cmd
	f := &c.runFlags
	cmd.Flag("scenario", "Name of the scenario to run.").Required().StringVar(&f.scenario)
	cmd.Flag("output", "Report format: text or json.").Default(runreport.FormatText).EnumVar(&f.output, runreport.FormatText, runreport.FormatJSON)
	cmd.Flag("plot.file", "For a capacity_search scenario: write the plot of throughput and p99 per step (SVG) to this file.").StringVar(&f.plotFile)
	addShardFlags(cmd, &f.shard)
	cmd.Flag("webpubsub.listen-address", "Serve the Web PubSub event handler (/webpubsub/{hub}/events, for the upstream echo) on this address, for a service that is not embedded.").StringVar(&f.eventHandlerListen)
}

func (c *cli) addHubCommand() {
	cmd := c.app.Command("hub", "Serve the reference hub standalone.")
	c.hubCmd = cmd
	f := &c.hubFlags
	cmd.Flag("listen", "Address the hub listens on.").Default("127.0.0.1:5050").StringVar(&f.listen)
	cmd.Flag("metrics", "Serve the hub's own metrics at /metrics on the same address.").Default("true").BoolVar(&f.metrics)
	cmd.Flag("delivery-delay", "Hold every delivery back by this long (rehearse latency alerts).").Default("0s").DurationVar(&f.settings.DeliveryDelay)
	cmd.Flag("access-key-file", "Also emulate Azure SignalR Service and Azure Web PubSub (client endpoints and REST APIs) with the access key in this file.").StringVar(&f.accessKeyFile)
	cmd.Flag("webpubsub.event-handler", "Web PubSub emulation: send user events to this event handler URL template ({hub}, {event}) as CloudEvents (needs --access-key-file).").StringVar(&f.wpsEventHandler)
	cmd.Flag("units", "Refuse connections past units × 1000, like the service's Standard tier (0: no quota).").Default("0").IntVar(&f.settings.Units)
	cmd.Flag("connection-quota", "Refuse connections past this many (overrides --units; 0 keeps it).").Default("0").IntVar(&f.settings.ConnectionQuota)
	cmd.Flag("message-rate-limit", "Accept at most this many messages per second (0: no limit).").Default("0").Float64Var(&f.settings.MessageRateLimit)
	cmd.Flag("redirect-negotiate", "Make negotiate redirect to the emulated service, as an app server in default mode (classic: ASP.NET mode) does (needs --access-key-file).").BoolVar(&f.settings.RedirectNegotiate)
	cmd.Flag("poll-timeout", "How long a Long Polling request waits for data before it is answered empty.").Default("90s").DurationVar(&f.pollTimeout)
	cmd.Flag("entra.issuer", "Azure emulation: also accept Microsoft Entra ID bearer tokens from this OpenID issuer (an https URL) on the REST APIs and :generateToken; its certificate is checked against the system roots (SSL_CERT_FILE).").StringVar(&f.settings.EntraIssuer)
	cmd.Flag("drop-every", "A standing drill: end one connection every this long, as --drop says (0: never).").Default("0s").DurationVar(&f.settings.DropEvery)
	cmd.Flag("drop", "How the standing drill ends a connection: close_error, close_reconnect, disconnect, abort or restart.").Default("abort").EnumVar(&f.settings.Drop, config.Drills...)
	cmd.Flag("idle-timeout", "Cut a connection whose client sent nothing, not even a ping, for this long, as a load balancer would (0: never).").Default("0s").DurationVar(&f.settings.IdleTimeout)
	cmd.Flag("disable-local-auth", "Azure emulation: refuse every token signed with the access key, as a service with disableLocalAuth does (needs --entra.issuer).").BoolVar(&f.settings.DisableLocalAuth)
}

func (c *cli) addPlanCommand() {
	cmd := c.app.Command("plan", "Size an Azure SignalR Service or Web PubSub tier for a workload, by the vendor's performance guide.")
	c.planCmd = cmd
	f := &c.planFlags
	cmd.Flag("workload.file", "Workload file (YAML) listing the scenarios to size for; see docs/tiers.md.").Required().StringVar(&f.workloadFile)
	cmd.Flag("output", "Plan format: text or json.").Default("text").EnumVar(&f.output, "text", "json")
}

// buildInfo is what the binary knows of its build; the version set with
// -ldflags wins over the module's.
func buildInfo() exporter.BuildInfo {
	b := exporter.ReadBuildInfo()
	b.Version = version
	return b
}

// newLogger logs at level and above, as logfmt or JSON.
func newLogger(w io.Writer, level, format string) zerolog.Logger {
	if format == "logfmt" {
		w = zerolog.ConsoleWriter{Out: w, NoColor: true, TimeFormat: time.RFC3339Nano}
	}
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}
