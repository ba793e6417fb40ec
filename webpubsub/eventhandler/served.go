package eventhandler

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/internal/rawsock"
	"github.com/rs/zerolog"
)

// Served is the handler served on a listener of its own. The daemon
// mounts the same handler on its web listener for real services; the
// embedded hubs reach it on this loopback listener, which the web
// listener's TLS and basic auth settings do not guard, so that an embedded
// Web PubSub target needs no setup whatever those are.
type Served struct {
	*Handler
	srv *http.Server
	// Template is the URL template the embedded hubs are given.
	Template string
}

// Serve serves a new handler on addr, by default a free loopback port; obs
// (the exporter's metrics) hears every answer on every listener.
func Serve(log zerolog.Logger, obs Observer, addr string) (*Served, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("event handler listener: %w", err)
	}
	h := New(Options{Logger: log, Observer: obs})
	mux := http.NewServeMux()
	mux.Handle(Prefix, h)
	e := &Served{Handler: h, Template: URL("http://" + loopbackAddr(l.Addr())),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := e.srv.Serve(rawsock.Listener(l)); !errors.Is(err, http.ErrServerClosed) {
			log.Error().Str("err", err.Error()).Msg("Web PubSub event handler for the embedded hubs failed")
		}
	}()
	return e, nil
}

// Routes mounts the handler on another listener (the web listener) too.
func (e *Served) Routes() map[string]http.Handler {
	return map[string]http.Handler{Prefix: e.Handler}
}

// Close stops the listener of its own.
func (e *Served) Close() { _ = e.srv.Close() }

// loopbackAddr is how a hub on this machine reaches a listener: at
// 127.0.0.1 when it listens on every address.
func loopbackAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}
