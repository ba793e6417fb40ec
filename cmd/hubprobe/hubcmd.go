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

	"github.com/hubprobe/hubprobe/hub"
)

// serveHub runs the reference hub on its own, for probing from another
// process or machine; its load and counters are served at /metrics.
func serveHub(ctx context.Context, addr string, withMetrics bool, delay time.Duration, stderr io.Writer, log zerolog.Logger) int {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	h, err := hub.New(hub.Options{DeliveryDelay: delay, Logger: log}, reg)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	reg.MustRegister(hub.NewLoadCollector(h, nil))
	mux := http.NewServeMux()
	mux.Handle("/", h)
	if withMetrics {
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	}
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info().Str("listen", addr).Msg("reference hub serving /signalrbench")
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
