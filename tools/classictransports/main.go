// Command classictransports repeats, for hubprobe's classic ASP.NET
// SignalR client, the experiment of the blog post "SignalR傳輸效能評測"
// (Darkthread, 2013), which timed ASP.NET SignalR 2.0's four transports
// in browsers: 1,000 items pushed to one client in one hub call, five
// times per transport, then the same from the client to the server.
//
// It runs against the reference hub (started in process on 127.0.0.1
// unless -url names another classic endpoint that has the method below).
// Each transport gets one connection, and each repetition times:
//
//   - down: from the call of BatchTest(1000, payload), which the
//     reference hub's classic Signalrbench hub has as hubprobe's own
//     method beside the benchmark's, until the last of the 1,000 Measure
//     calls it makes, marked "Last" as the post's last record was, has
//     arrived (all 1,000 are counted);
//   - up: from the first of 1,000 invocations the client makes at once,
//     GroupBroadcast to a group with no members, each of which the hub
//     reads, dispatches and delivers to nobody, until the hub has
//     answered every one.
//
// The same runs over the reference hub's ASP.NET Core SignalR transports
// (ServerPush down, SendToGroup to an empty group up) for comparison,
// unless -url is given. The payload is 256 bytes. Usage:
//
//	go run ./tools/classictransports [-url http://host/signalr] [-n 1000] [-repeat 5]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/hub"
)

func main() {
	url := flag.String("url", "", "a classic ASP.NET SignalR endpoint with BatchTest (default: the reference hub, in process, and its Core endpoint too)")
	n := flag.Int("n", 1000, "items per repetition")
	repeat := flag.Int("repeat", 5, "repetitions per transport")
	flag.Parse()
	if err := run(os.Stdout, *url, *n, *repeat); err != nil {
		fmt.Fprintln(os.Stderr, "classictransports:", err)
		os.Exit(1)
	}
}

// run prints the table: a row per server and transport.
func run(out io.Writer, classicURL string, n, repeat int) error {
	coreURL := ""
	if classicURL == "" {
		origin, stop, err := startHub()
		if err != nil {
			return err
		}
		defer stop()
		classicURL, coreURL = origin+"/signalr", origin+hub.DefaultPath
	}
	fmt.Fprintf(out, "| server | transport | down: %d items in one call, ms | up: %d invocations, ms |\n|---|---|---|---|\n", n, n)
	for _, row := range rows(classicURL, coreURL) {
		down, up, err := measure(row.dial, n, repeat)
		if err != nil {
			return fmt.Errorf("%s %s: %w", row.server, row.transport, err)
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s |\n", row.server, row.transport, join(down), join(up))
	}
	return nil
}

func startHub() (origin string, stop func(), err error) {
	h, err := hub.New(hub.Options{}, prometheus.NewRegistry())
	if err != nil {
		return "", nil, err
	}
	srv, err := hub.Start(context.Background(), "127.0.0.1:0", h)
	if err != nil {
		h.Close()
		return "", nil, err
	}
	return srv.Origin(), func() { srv.Close(); h.Close() }, nil
}

// row is one line of the table: a server's transport and how to connect.
type row struct {
	server, transport string
	dial              func(ctx context.Context, n int) (*batchConn, error)
}

func rows(classicURL, coreURL string) []row {
	var out []row
	for _, t := range []string{"foreverFrame", "longPolling", "serverSentEvents", "webSockets"} {
		out = append(out, row{"classic", t, func(ctx context.Context, n int) (*batchConn, error) { return dialClassic(ctx, classicURL, t, n) }})
	}
	if coreURL == "" {
		return out
	}
	for _, t := range []string{"longpolling", "sse", "websockets"} {
		out = append(out, row{"core", t, func(ctx context.Context, n int) (*batchConn, error) { return dialCore(ctx, coreURL, t, n) }})
	}
	return out
}

func join(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.1f", float64(d.Microseconds())/1000)
	}
	return strings.Join(parts, ", ")
}
