//go:build linux

package clientconn

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/internal/rawsock"
)

// The dialer's WebSocket connections read and write with raw system calls
// (package rawsock), through the dial function of the client's transport
// when it has one.
func TestWebSocketDialerDialsRawSockets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			kind, p, err := ws.ReadMessage()
			if err != nil || ws.WriteMessage(kind, p) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	var dials atomic.Int32
	transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	for name, s := range map[string]Settings{
		"default transport": {HandshakeTimeout: 5 * time.Second},
		"client transport":  {HandshakeTimeout: 5 * time.Second, HTTPClient: &http.Client{Transport: transport}},
	} {
		d := s.WebSocketDialer()
		ws, _, err := d.DialContext(localtest.Ctx(t, 5*time.Second), url, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, ok := ws.NetConn().(*rawsock.Conn); !ok {
			t.Errorf("%s: the connection is a %T, not a raw socket", name, ws.NetConn())
		}
		payload := strings.Repeat("x", 100_000) // more than one read and write
		if err := ws.WriteMessage(websocket.TextMessage, []byte(payload)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, got, err := ws.ReadMessage(); err != nil || string(got) != payload {
			t.Errorf("%s: echo of %d bytes came back as %d bytes, %v", name, len(payload), len(got), err)
		}
		ws.Close()
	}
	if dials.Load() != 1 {
		t.Errorf("the client's transport dialed %d times, want 1", dials.Load())
	}
}
