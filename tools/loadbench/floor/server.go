package floor

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Serve echoes every frame of every WebSocket connection accepted on ln
// until ctx ends, then closes the listener and all connections.
func Serve(ctx context.Context, ln net.Listener) error {
	s := &echoServer{conns: map[*websocket.Conn]struct{}{}}
	s.upgrader = websocket.Upgrader{
		ReadBufferSize:  BufferSize,
		WriteBufferSize: BufferSize,
		CheckOrigin:     func(*http.Request) bool { return true },
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		s.closeAll()
		return err
	}
	_ = srv.Close() // hijacked connections are not closed by the server
	s.closeAll()
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type echoServer struct {
	upgrader websocket.Upgrader
	mu       sync.Mutex
	conns    map[*websocket.Conn]struct{}
}

// ServeHTTP upgrades and echoes on the handler's own goroutine: one
// goroutine per connection, the least a gorilla server can run.
func (s *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	for {
		kind, p, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(kind, p); err != nil {
			return
		}
	}
}

func (s *echoServer) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		_ = c.Close()
	}
}
