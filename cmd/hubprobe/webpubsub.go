package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/webpubsub/eventhandler"
)

// eventHandler is hubprobe's Web PubSub event handler, the upstream echo's
// other end. serve mounts it on the web listener for real services; the
// embedded hubs reach it on a loopback listener of its own, which the web
// listener's TLS and basic auth settings do not guard, so that an embedded
// Web PubSub target needs no setup whatever those are.
type eventHandler struct {
	*eventhandler.Handler
	srv *http.Server
	// template is the URL template the embedded hubs are given.
	template string
}

// startEventHandler serves the handler on addr, by default a free
// loopback port; obs (the exporter's metrics) hears every answer on every
// listener.
func startEventHandler(log zerolog.Logger, obs eventhandler.Observer, addr string) (*eventHandler, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("event handler listener: %w", err)
	}
	h := eventhandler.New(eventhandler.Options{Logger: log, Observer: obs})
	mux := http.NewServeMux()
	mux.Handle(eventhandler.Prefix, h)
	e := &eventHandler{Handler: h, template: eventhandler.URL("http://" + loopbackAddr(l.Addr())),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := e.srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			log.Error().Str("err", err.Error()).Msg("Web PubSub event handler for the embedded hubs failed")
		}
	}()
	return e, nil
}

// routes mounts the handler on the web listener too.
func (e *eventHandler) routes() map[string]http.Handler {
	return map[string]http.Handler{eventhandler.Prefix: e.Handler}
}

func (e *eventHandler) close() { _ = e.srv.Close() }

// loopbackAddr is how a hub on this machine reaches a listener: at
// 127.0.0.1 when it listens on every address.
func loopbackAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}
