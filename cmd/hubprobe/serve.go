package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/daemon"
)

// shutdownGrace bounds how long in-flight runs get to close their
// connections after SIGTERM.
const shutdownGrace = 10 * time.Second

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
	listeners, err := listenWeb(webFlags)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	d, err := daemon.New(ctx, daemon.Options{Logger: log, Shard: shard, Search: search, ConfigFile: g.configFile, Build: buildInfo()})
	if err != nil {
		closeListeners(listeners)
		fmt.Fprintln(stderr, "hubprobe:", err)
		if errors.Is(err, daemon.ErrBadConfig) {
			return exitUsage // the file changed since it was read
		}
		return exitFailed
	}
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- web.ServeMultiple(listeners, srv, webFlags, slogFor(log)) }()
	go d.ReloadOnSIGHUP(ctx)

	code := waitServing(ctx, serveErr, log)
	shutdown(srv, d)
	return code
}

// waitServing waits for the end: a signal, or the web server failing.
func waitServing(ctx context.Context, serveErr <-chan error, log zerolog.Logger) int {
	select {
	case <-ctx.Done():
		log.Info().Msg("shutting down")
		return exitOK
	case err := <-serveErr:
		log.Error().Str("err", err.Error()).Msg("web server failed")
		return exitFailed
	}
}

func shutdown(srv *http.Server, d *daemon.Daemon) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	_ = srv.Shutdown(ctx)
	done := make(chan struct{})
	go func() { d.Stop(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
