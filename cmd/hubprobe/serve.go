package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/prometheus/exporter-toolkit/web"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/daemon"
)

func serve(ctx context.Context, g globalFlags, webFlags *web.FlagConfig, f serveSettings, stderr io.Writer, log zerolog.Logger) int {
	shard, search, err := f.resolve()
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitUsage
	}
	// A bad file is the first thing to say, taken address or not; it is
	// read again, and kept, by the daemon.
	if _, ok := loadConfig(g, stderr); !ok {
		return exitUsage
	}
	// Then the web listeners, before the daemon starts: its embedded hubs
	// take random ports, which must not be an address the user asked for.
	listeners, err := daemon.ListenWeb(webFlags)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	d, err := daemon.New(ctx, daemon.Options{Logger: log, Shard: shard, Search: search, ConfigFile: g.configFile, Build: buildInfo()})
	if err != nil {
		listeners.Close()
		fmt.Fprintln(stderr, "hubprobe:", err)
		if errors.Is(err, daemon.ErrBadConfig) {
			return exitUsage // the file changed since it was read
		}
		return exitFailed
	}
	if err := d.Serve(ctx, listeners); err != nil {
		return exitFailed
	}
	return exitOK
}
