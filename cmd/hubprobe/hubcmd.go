package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
)

// hubFlags are the settings of `hubprobe hub`: those an embedded hub has
// in the config, and where to serve.
type hubFlags struct {
	listen        string
	metrics       bool
	accessKeyFile string
	pollTimeout   time.Duration
	settings      config.EmbeddedHub
	// wpsEventHandler is the Web PubSub emulation's event handler URL
	// template.
	wpsEventHandler string
}

// options turns the flags into hub options, reading the access key.
func (f hubFlags) options(log zerolog.Logger) (hub.Options, error) {
	if f.accessKeyFile != "" {
		key, err := config.ReadSecretFile(f.accessKeyFile)
		if err != nil {
			return hub.Options{}, fmt.Errorf("--access-key-file: %w", err)
		}
		f.settings.AccessKey = config.Secret(key)
	}
	opts := hub.EmbeddedOptions(f.settings)
	opts.Logger, opts.PollTimeout, opts.WebPubSubEventHandler = log, f.pollTimeout, f.wpsEventHandler
	return opts, nil
}

// serveHub runs the reference hub on its own, for probing from another
// process or machine; its load and counters are served at /metrics.
func serveHub(ctx context.Context, f hubFlags, stderr io.Writer, log zerolog.Logger) int {
	opts, err := f.options(log)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitUsage
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	h, err := hub.New(opts, reg)
	if err != nil { // the options are wrong: a usage error
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitUsage
	}
	reg.MustRegister(hub.NewLoadCollector(h, nil))
	mux := http.NewServeMux()
	mux.Handle("/", h)
	if f.metrics {
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	}
	srv := &http.Server{Addr: f.listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info().Str("listen", f.listen).Bool("azure_emulation", opts.AccessKey != "").
		Int("connection_quota", f.settings.ConnectionQuota).Int("units", f.settings.Units).Float64("message_rate_limit", f.settings.MessageRateLimit).
		Msg("reference hub serving /signalrbench")
	code := exitOK
	select {
	case <-ctx.Done():
	case err := <-errc:
		fmt.Fprintln(stderr, "hubprobe:", err)
		code = exitFailed
	}
	h.Close()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	return code
}
