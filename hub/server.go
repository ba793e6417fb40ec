package hub

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/internal/rawsock"
)

// Server serves one Hub on its own listener.
type Server struct {
	hub       *Hub
	srv       *http.Server
	origin    string
	served    chan struct{}
	closeOnce sync.Once
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves h there until ctx
// ends or Close is called.
func Start(ctx context.Context, addr string, h *Hub) (*Server, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		hub:    h,
		srv:    &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		origin: "http://" + dialableAddr(ln.Addr()),
		served: make(chan struct{}),
	}
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(rawsock.Listener(ln)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.opts.Logger.Error().Err(err).Msg("hub server stopped")
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.served:
		}
	}()
	return s, nil
}

// dialableAddr turns a wildcard listen address into one a client can dial.
func dialableAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}

// URL is the hub's base URL, e.g. "http://127.0.0.1:PORT/signalrbench".
func (s *Server) URL() string { return s.origin + s.hub.opts.Path }

// Drop ends up to n of the hub's open connections (all of them when n <=
// 0) as how says; see Hub.Drop.
func (s *Server) Drop(how Drill, n int) int { return s.hub.Drop(how, n) }

// Origin is the server's scheme and address, e.g. "http://127.0.0.1:PORT":
// the Endpoint of the Azure SignalR Service the hub emulates.
func (s *Server) Origin() string { return s.origin }

// ConnectionString is an Azure SignalR Service connection string for the
// emulated service, or "" when the emulation is off. It holds the access
// key: keep it out of logs. Without a usable key (none given, or local
// auth disabled) it is the keyless form, AuthType=azure: sign in with
// Microsoft Entra ID.
func (s *Server) ConnectionString() string {
	o := s.hub.opts
	switch {
	case !o.EmulatesAzure():
		return ""
	case o.AccessKey == "" || o.DisableLocalAuth:
		return "Endpoint=" + s.origin + ";AuthType=azure;Version=1.0;"
	}
	return "Endpoint=" + s.origin + ";AccessKey=" + o.AccessKey + ";Version=1.0;"
}

// Close closes the hub, so its clients get a Close message (Long Polling
// clients can still collect theirs), then stops listening; it returns when
// both have stopped.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.hub.Close()
		_ = s.srv.Close()
		<-s.served
	})
}
