package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/hubprobe/hubprobe/tools/loadbench/floor"
)

// errUsage is a flag error, already printed by the flag package.
var errUsage = errors.New("usage")

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	return nil
}

// bench is the default command: both pairs, -runs times, then the report.
func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseBenchFlags(args, stderr)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	o.self = []string{self}
	res, err := runBench(ctx, o)
	if err != nil {
		return err
	}
	writeReport(stdout, res)
	return nil
}

func parseBenchFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("loadbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := options{progress: stderr}
	fs.IntVar(&o.n, "n", 1000, "connections per client")
	fs.DurationVar(&o.window, "window", 30*time.Second, "measured sending window")
	fs.IntVar(&o.runs, "runs", 3, "runs of each pair; medians are reported")
	quick := fs.Bool("quick", false, "smoke test: -n 200 -window 5s -runs 1, unless given")
	fs.DurationVar(&o.interval, "interval", time.Second, "each connection sends once per interval")
	fs.IntVar(&o.size, "size", 2048, "message size in bytes")
	fs.IntVar(&o.concurrency, "connect-concurrency", 50, "connections opened at once")
	fs.DurationVar(&o.lossTimeout, "loss-timeout", 5*time.Second, "wait for late replies after the last send")
	fs.StringVar(&o.hubprobe, "hubprobe", "", "hubprobe binary to measure (default: go build ./cmd/hubprobe)")
	fs.Float64Var(&o.maxOther, "max-other-load", 0.5, "repeat a run (up to 3 times) when other processes kept more than this many cores busy during its window; 0 accepts every run")
	fs.BoolVar(&o.classic, "classic", false, "also run the classic ASP.NET SignalR echo over WebSockets: hubprobe run against hubprobe hub's /signalr")
	fs.BoolVar(&o.webPubSub, "webpubsub", false, "also run the Web PubSub upstream echo: hubprobe run against hubprobe hub's Web PubSub emulation, answered by the run's own event handler")
	fs.BoolVar(&o.peer, "peer", false, "also run hubprobe run and the official JavaScript client (npm ci in tools/loadbench/jspeer first) against the third-party philippseith/signalr server, side by side")
	fs.StringVar(&o.perfDir, "perf", "", "after the measured runs, run each pair once more under perf record, writing the data to `DIR`")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	if *quick {
		applyQuick(fs, &o)
	}
	return o, o.validate()
}

// applyQuick sets the smoke-test workload where flags did not say otherwise.
func applyQuick(fs *flag.FlagSet, o *options) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["n"] {
		o.n = 200
	}
	if !set["window"] {
		o.window = 5 * time.Second
	}
	if !set["runs"] {
		o.runs = 1
	}
}

// floorServer echoes on -listen and prints "listening ADDR" once it does.
func floorServer(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("floor-server", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "loopback address to listen on")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening %s\n", ln.Addr())
	return floor.Serve(ctx, ln)
}

// floorClient runs one open-loop echo run and prints its JSON report.
func floorClient(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("floor-client", flag.ContinueOnError)
	var c floor.ClientConfig
	fs.StringVar(&c.URL, "url", "", "ws:// URL of a floor server")
	fs.IntVar(&c.Connections, "n", 1000, "connections")
	fs.DurationVar(&c.Window, "window", 30*time.Second, "sending window")
	fs.DurationVar(&c.Interval, "interval", time.Second, "each connection sends once per interval")
	fs.IntVar(&c.Size, "size", 2048, "frame size in bytes")
	fs.IntVar(&c.ConnectConcurrency, "connect-concurrency", 50, "connections opened at once")
	fs.DurationVar(&c.ConnectTimeout, "connect-timeout", connectTimeout, "deadline of one connection's dial and upgrade")
	fs.DurationVar(&c.LossTimeout, "loss-timeout", 5*time.Second, "wait for late replies after the last send")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rep, err := floor.RunClient(ctx, c)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
