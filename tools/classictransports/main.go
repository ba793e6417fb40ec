// Command classictransports repeats, for hubprobe's classic ASP.NET
// SignalR client, the experiment of the blog post "SignalR傳輸效能評測"
// (Darkthread, 2013), which timed ASP.NET SignalR 2.0's four transports
// in browsers: 1,000 items pushed to one client, five times per
// transport, then the same from the client to the server.
//
// It runs against the reference hub's classic side (started in process
// on 127.0.0.1 unless -url names another classic endpoint) with the
// benchmark's Signalrbench hub. That hub has no method that pushes a
// batch in one call, so each repetition times, on one connection, "up":
// 1,000 invocations written back to back (Echo with a 256-byte payload)
// until the hub has answered the last, whose result comes after every
// earlier one's; and "down": from the first of those writes until the
// 1,000th Measure the hub sent back has arrived. Usage:
//
//	go run ./tools/classictransports [-url http://host/signalr] [-n 1000] [-repeat 5]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/probe/aspnetclient"
)

func main() {
	url := flag.String("url", "", "a classic ASP.NET SignalR endpoint (default: the reference hub, in process)")
	n := flag.Int("n", 1000, "items per repetition")
	repeat := flag.Int("repeat", 5, "repetitions per transport")
	flag.Parse()
	if err := run(*url, *n, *repeat); err != nil {
		fmt.Fprintln(os.Stderr, "classictransports:", err)
		os.Exit(1)
	}
}

func run(url string, n, repeat int) error {
	if url == "" {
		h, err := hub.New(hub.Options{}, prometheus.NewRegistry())
		if err != nil {
			return err
		}
		defer h.Close()
		srv, err := hub.Start(context.Background(), "127.0.0.1:0", h)
		if err != nil {
			return err
		}
		defer srv.Close()
		url = srv.Origin() + "/signalr"
	}
	fmt.Printf("| transport | up: %d invocations, ms | down: %d Measure back, ms |\n|---|---|---|\n", n, n)
	for _, transport := range []string{"foreverFrame", "longPolling", "serverSentEvents", "webSockets"} {
		up, down, err := measure(url, transport, n, repeat)
		if err != nil {
			return fmt.Errorf("%s: %w", transport, err)
		}
		fmt.Printf("| %s | %s | %s |\n", transport, join(up), join(down))
	}
	return nil
}

// measure opens one connection over transport and times repeat bursts.
func measure(url, transport string, n, repeat int) (up, down []time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var got atomic.Int64
	arrived := make(chan struct{}, 1)
	c, err := aspnetclient.Dial(ctx, aspnetclient.Options{URL: url, Hub: "Signalrbench", Transport: transport,
		Handlers: map[string]aspnetclient.Handler{"Measure": func([]json.RawMessage) {
			if got.Add(1) == int64(n) {
				arrived <- struct{}{}
			}
		}}})
	if err != nil {
		return nil, nil, err
	}
	defer c.Close(context.Background())
	payload, _ := json.Marshal(strings.Repeat("x", 256))
	for range repeat {
		got.Store(0)
		start := time.Now()
		for i := 1; i < n; i++ {
			if err := c.Send(ctx, "Echo", json.RawMessage("0"), payload); err != nil {
				return nil, nil, err
			}
		}
		if _, err := c.Invoke(ctx, "Echo", json.RawMessage("0"), payload); err != nil {
			return nil, nil, err
		}
		up = append(up, time.Since(start))
		select {
		case <-arrived:
			down = append(down, time.Since(start))
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("%d of %d Measure calls arrived", got.Load(), n)
		}
	}
	return up, down, nil
}

func join(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.1f", float64(d.Microseconds())/1000)
	}
	return strings.Join(parts, ", ")
}
