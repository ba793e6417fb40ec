package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/hub"
)

// hubFlags are the settings of `hubprobe hub`.
type hubFlags struct {
	listen            string
	metrics           bool
	delay             time.Duration
	accessKeyFile     string
	units             int
	connectionQuota   int
	messageRateLimit  float64
	redirectNegotiate bool
	pollTimeout       time.Duration
	wpsEventHandler   string
}

// maxAccessKeyFile bounds what --access-key-file may hold; keys are short.
const maxAccessKeyFile = 4 << 10

// options turns the flags into hub options, reading the access key. Errors
// name the file, never its content.
func (f hubFlags) options(log zerolog.Logger) (hub.Options, error) {
	opts := hub.Options{
		DeliveryDelay: f.delay, Logger: log, Units: f.units, ConnectionQuota: f.connectionQuota,
		MessageRateLimit: f.messageRateLimit, RedirectNegotiate: f.redirectNegotiate, PollTimeout: f.pollTimeout,
		WebPubSubEventHandler: f.wpsEventHandler,
	}
	if f.accessKeyFile == "" {
		return opts, nil
	}
	st, err := os.Stat(f.accessKeyFile)
	if err == nil && (!st.Mode().IsRegular() || st.Size() > maxAccessKeyFile) {
		err = fmt.Errorf("not a regular file of at most %d bytes", maxAccessKeyFile)
	}
	var data []byte
	if err == nil {
		data, err = os.ReadFile(f.accessKeyFile)
	}
	if err != nil {
		return opts, fmt.Errorf("--access-key-file %q: %w", f.accessKeyFile, pathErr(err))
	}
	if opts.AccessKey = strings.TrimSpace(string(data)); opts.AccessKey == "" {
		return opts, fmt.Errorf("--access-key-file %q is empty", f.accessKeyFile)
	}
	return opts, nil
}

// pathErr drops the path that *os.PathError repeats.
func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
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
		Int("connection_quota", f.connectionQuota).Int("units", f.units).Float64("message_rate_limit", f.messageRateLimit).
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
