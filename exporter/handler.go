package exporter

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// maxScrapesInFlight bounds concurrent /metrics requests; a scrape is
// cheap, so more than this means something is hammering the endpoint.
const maxScrapesInFlight = 10

// HandlerOptions wires the HTTP endpoints to the rest of the daemon.
type HandlerOptions struct {
	// Gatherer serves /metrics. The caller decides what it combines (the
	// application registry, go and process collectors).
	Gatherer prometheus.Gatherer
	// Ready reports whether the daemon is ready; nil means always ready.
	Ready func() bool
	// Reload re-reads the configuration; nil makes /-/reload answer 501.
	Reload func() error
	// Routes are more handlers, by mux pattern: the status pages
	// (package statuspage) and the Web PubSub event handler under
	// /webpubsub/. May be nil.
	Routes map[string]http.Handler
}

// NewHandler returns the mux with /metrics, /-/healthy, /-/ready,
// /-/reload and the Routes.
func NewHandler(opts HandlerOptions) http.Handler {
	gatherer := opts.Gatherer
	if gatherer == nil {
		gatherer = prometheus.NewRegistry()
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: maxScrapesInFlight,
		// Protobuf negotiation, which native histograms need, is always
		// on; OpenMetrics adds exemplars and created timestamps.
		EnableOpenMetrics: true,
	}))
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "Healthy")
	})
	mux.HandleFunc("GET /-/ready", readyHandler(opts.Ready))
	mux.HandleFunc("POST /-/reload", reloadHandler(opts.Reload))
	for pattern, h := range opts.Routes {
		mux.Handle(pattern, h)
	}
	return mux
}

func readyHandler(ready func() bool) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil && !ready() {
			writeText(w, http.StatusServiceUnavailable, "Not ready")
			return
		}
		writeText(w, http.StatusOK, "Ready")
	}
}

func reloadHandler(reload func() error) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if reload == nil {
			writeText(w, http.StatusNotImplemented, "reload is not available")
			return
		}
		if err := reload(); err != nil {
			writeText(w, http.StatusInternalServerError, fmt.Sprintf("failed to reload config: %v", err))
			return
		}
		writeText(w, http.StatusOK, "Reloaded")
	}
}

func writeText(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintln(w, text)
}
