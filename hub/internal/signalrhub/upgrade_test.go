package signalrhub

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
)

// A WebSocket connection outlives its upgrade request's handler, so the
// HTTP server's request state is not held for the connection's life; the
// connection keeps working after the handler has returned.
func TestWebSocketHandlerReturnsAfterTheUpgrade(t *testing.T) {
	h := newHub(t, Config{}, core.Config{})
	returned := make(chan struct{}, 1)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if websocket.IsWebSocketUpgrade(r) {
			returned <- struct{}{}
		}
	})
	srv := wiretest.Serve(t, handler, h.cfg.Path, h.Config.AccessKey, h.Close)
	c := wiretest.Connect(t, srv)
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("the upgrade's handler had not returned 5 s after the handshake")
	}
	c.Send(`{"type":1,"target":"Echo","arguments":[{"after":"return"}]}`)
	if got, want := c.NextNonPingRecord(), recordLatencyRecord(`{"after":"return"}`); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// A client that sends a frame before the 101 has its upgrade refused, as
// gorilla refuses it, rather than the frame lost in a buffer the hub
// swapped out.
func TestWebSocketUpgradeRefusesDataBeforeTheHandshake(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.Origin(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	req := "GET " + strings.TrimPrefix(srv.URL(), srv.Origin()) + " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n" +
		"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
	early := []byte{0x81, 0x02, 'h', 'i'} // an unmasked text frame, sent at once
	if _, err := conn.Write(append([]byte(req), early...)); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(conn).ReadString('\n')
	if strings.Contains(line, "101") {
		t.Fatalf("upgrade accepted (%q) with a frame sent before the 101", line)
	}
}
