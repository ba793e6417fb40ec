package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/mdlayher/vsock"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/rs/zerolog"
)

// shutdownGrace bounds how long in-flight runs get to close their
// connections once the daemon is told to stop.
const shutdownGrace = 10 * time.Second

// WebListeners are the web listeners the flags ask for, claimed before the
// daemon starts.
type WebListeners struct {
	flags     *web.FlagConfig
	listeners []net.Listener
}

// ListenWeb claims the web listeners the flags ask for: every
// --web.listen-address (tcp, or vsock://:PORT), or the listeners systemd
// hands over with --web.systemd-socket. A caller claims them before New,
// so that no embedded hub or event handler, each on a random port, can
// take an address the user asked for, and an address already taken fails
// at once. On an error no listener is left open.
func ListenWeb(flags *web.FlagConfig) (*WebListeners, error) {
	w := &WebListeners{flags: flags}
	if flags.WebSystemdSocket != nil && *flags.WebSystemdSocket {
		listeners, err := activation.Listeners()
		if err == nil && len(listeners) == 0 {
			err = errors.New("no socket activation file descriptors found")
		}
		w.listeners = listeners
		return w, err
	}
	if flags.WebListenAddresses == nil || len(*flags.WebListenAddresses) == 0 {
		return nil, errors.New("no --web.listen-address")
	}
	for _, address := range *flags.WebListenAddresses {
		l, err := listenAddress(address)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("--web.listen-address %s: %w", address, err)
		}
		w.listeners = append(w.listeners, l)
	}
	return w, nil
}

// listenAddress listens on one --web.listen-address.
func listenAddress(address string) (net.Listener, error) {
	if !strings.HasPrefix(address, "vsock://") {
		return net.Listen("tcp", address)
	}
	u, err := url.Parse(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(u.Port(), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("vsock port %q: want a number", u.Port())
	}
	return vsock.Listen(uint32(port), nil)
}

// Close releases the listeners of a daemon that will not serve on them.
func (w *WebListeners) Close() {
	for _, l := range w.listeners {
		_ = l.Close()
	}
}

// Serve serves Handler on w, with the TLS and basic auth of the web flags'
// --web.config.file, and reloads the configuration on every SIGHUP, until
// ctx ends or the web server fails (its error). Then it shuts the server
// down and stops the daemon, each within shutdownGrace.
func (d *Daemon) Serve(ctx context.Context, w *WebListeners) error {
	log := d.opts.Logger
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() {
		serveErr <- web.ServeMultiple(w.listeners, srv, w.flags, slog.New(zerolog.NewSlogHandler(log)))
	}()
	go d.ReloadOnSIGHUP(ctx)
	var err error
	select {
	case <-ctx.Done():
		log.Info().Msg("shutting down")
	case err = <-serveErr:
		log.Error().Str("err", err.Error()).Msg("web server failed")
	}
	d.shutdown(srv)
	return err
}

// shutdown closes the web server, then stops the daemon, each within
// shutdownGrace.
func (d *Daemon) shutdown(srv *http.Server) {
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
