package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/scenarios"
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
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	history := exporter.NewHistory(100)
	build := buildInfo()
	capacity := exporter.NewCapacityLog()
	metrics, err := exporter.NewMetrics(reg, exporter.WithHistory(history), exporter.WithBuildInfo(build),
		exporter.WithCapacityLog(capacity), exporter.WithShard(shard.Index, shard.Count))
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	safe := config.NewSafeConfig(reg, scenarios.Kinds())
	if err := loadInto(safe, g.configFile); err != nil {
		fmt.Fprintln(stderr, "hubprobe: bad configuration:", err)
		return exitUsage
	}

	d, err := newDaemon(ctx, log, metrics)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	d.shard, d.search = shard, search
	var ready atomic.Bool
	if err := d.apply(safe.Get()); err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		d.stop(ctx)
		return exitFailed
	}
	ready.Store(true)

	reload := func() error { return reloadConfig(safe, g.configFile, d, log) }
	handler := exporter.NewHandler(exporter.HandlerOptions{
		Gatherer:  prometheus.Gatherers{reg, d.hubs},
		Ready:     ready.Load,
		Reload:    reload,
		History:   history,
		Capacity:  capacity,
		Scenarios: d.statuses,
		Version:   version,
		Routes:    d.events.Routes(),
	})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- web.ListenAndServe(srv, webFlags, slogFor(log)) }()
	go reloadOnSIGHUP(ctx, reload, log)

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

func shutdown(srv *http.Server, d *daemon) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	_ = srv.Shutdown(ctx)
	done := make(chan struct{})
	go func() { d.stop(ctx); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func loadInto(safe *config.SafeConfig, path string) error {
	if path == "" {
		cfg, err := loadConfig("")
		if err != nil {
			return err
		}
		safe.Set(cfg)
		return nil
	}
	return safe.Reload(path)
}

// reloadConfig re-reads the file; a bad file keeps the running config (the
// SafeConfig reports it on hubprobe_config_last_reload_successful).
func reloadConfig(safe *config.SafeConfig, path string, d *daemon, log zerolog.Logger) error {
	if path == "" {
		return errors.New("no --config.file to reload: running the embedded default")
	}
	if err := safe.Reload(path); err != nil {
		log.Error().Str("err", err.Error()).Msg("config reload failed; keeping the running config")
		return err
	}
	if err := d.apply(safe.Get()); err != nil {
		log.Error().Str("err", err.Error()).Msg("applying the reloaded config failed")
		return err
	}
	log.Info().Str("file", path).Msg("config reloaded")
	return nil
}

func reloadOnSIGHUP(ctx context.Context, reload func() error, log zerolog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			log.Info().Msg("SIGHUP: reloading config")
			_ = reload()
		}
	}
}
