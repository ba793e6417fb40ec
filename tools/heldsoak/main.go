// Command heldsoak holds the embedded default with its held connections for
// a while and says whether they stayed healthy: the daemon's resident
// memory and goroutines flat, every drop of a held connection the one a
// standing drill of the embedded hub asked for, and nothing lost that was
// not in flight at a drop. See docs/performance.md, "Held connections".
//
//	go run ./tools/heldsoak -duration 30m -drop-every 2m
//
// It builds nothing: it runs the hubprobe binary given (-bin), which
// `go build ./cmd/hubprobe` makes.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// settings are the flags.
type settings struct {
	bin, listen     string
	duration, every time.Duration
	sample          time.Duration
	connections     int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("heldsoak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s settings
	fs.StringVar(&s.bin, "bin", "./hubprobe", "the hubprobe binary")
	fs.StringVar(&s.listen, "listen", "127.0.0.1:19754", "where the daemon serves /metrics")
	fs.DurationVar(&s.duration, "duration", 30*time.Minute, "how long to hold")
	fs.DurationVar(&s.every, "drop-every", 2*time.Minute, "the drill: the held hub ends one connection this often")
	fs.DurationVar(&s.sample, "sample", 30*time.Second, "how often to read the daemon's metrics")
	fs.IntVar(&s.connections, "connections", 10, "held connections")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	samples, err := soak(ctx, s, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "heldsoak:", err)
		return 1
	}
	return report(stdout, s, samples)
}
