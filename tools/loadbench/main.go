// Command loadbench measures what hubprobe's probe and reference hub cost
// against the floor, a bare gorilla/websocket echo pair, on loopback: CPU
// seconds per 1,000 round trips, memory per connection and latency, each
// side a separate process, every pair run several times, printed as a
// markdown table of medians and ratios. See docs/performance.md.
//
//	go run ./tools/loadbench -n 1000 -window 30s -runs 3
//
// The floor's two halves are subcommands of the same binary:
//
//	loadbench floor-server -listen 127.0.0.1:0
//	loadbench floor-client -url ws://127.0.0.1:PORT/ -n 1000 -window 30s
//
// With -peer it also runs hubprobe's probe and the official JavaScript
// client (tools/loadbench/jspeer, after npm ci there) against a third-party
// SignalR server, github.com/philippseith/signalr, served by the
// subcommand
//
//	loadbench thirdparty-server
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand; the default one is the benchmark.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var err error
	switch {
	case len(args) > 0 && args[0] == "floor-server":
		err = floorServer(ctx, args[1:], stdout)
	case len(args) > 0 && args[0] == "floor-client":
		err = floorClient(ctx, args[1:], stdout)
	case len(args) > 0 && args[0] == "thirdparty-server":
		err = thirdPartyServer(ctx, args[1:], stdout)
	default:
		err = bench(ctx, args, stdout, stderr)
	}
	if errors.Is(err, errUsage) {
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "loadbench:", err)
		return 1
	}
	return 0
}
