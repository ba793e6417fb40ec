package hub

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hubprobe/hubprobe/internal/rawsock"
)

// Standalone is the reference hub served on its own (`hubprobe hub`), for
// probing from another process or machine: the hub at /, and its load and
// counters at /metrics when asked.
type Standalone struct {
	hub *Hub
	srv *http.Server
}

// NewStandalone builds the hub and its server; an error means the options
// are wrong.
func NewStandalone(opts Options, listen string, withMetrics bool) (*Standalone, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	h, err := New(opts, reg)
	if err != nil {
		return nil, err
	}
	reg.MustRegister(NewLoadCollector(h, nil))
	mux := http.NewServeMux()
	mux.Handle("/", h)
	if withMetrics {
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	}
	return &Standalone{hub: h, srv: &http.Server{Addr: listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}}, nil
}

// listenAndServe is the server's ListenAndServe, its connections
// wrapped by rawsock as every hub server's are.
func (s *Standalone) listenAndServe() error {
	addr := s.srv.Addr
	if addr == "" {
		addr = ":http"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.srv.Serve(rawsock.Listener(ln))
}

// Serve listens until ctx ends or listening fails, then closes every
// connection and shuts the server down within 5 s.
func (s *Standalone) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.listenAndServe() }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.hub.Close()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(shutdownCtx)
	return err
}
