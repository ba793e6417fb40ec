//go:build linux

package transport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/internal/rawsock"
)

// An upgrade through HijackRecorder reads and writes its socket with raw
// system calls (package rawsock), and through its own read buffer.
func TestHijackRecorderUpgradesToARawSocket(t *testing.T) {
	kinds := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hj := &HijackRecorder{ResponseWriter: w}
		ws, err := NewUpgrader().Upgrade(hj, r, nil)
		if err != nil {
			kinds <- err.Error()
			return
		}
		defer ws.Close()
		_, isRaw := ws.NetConn().(*rawsock.Conn)
		kinds <- map[bool]string{true: "raw", false: "plain"}[isRaw && hj.Reader != nil]
		for {
			kind, p, err := ws.ReadMessage()
			if err != nil || ws.WriteMessage(kind, p) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if got := <-kinds; got != "raw" {
		t.Fatalf("the hub's socket: %s, want a raw socket with the recorder's reader", got)
	}
	payload := strings.Repeat("y", 100_000)
	if err := ws.WriteMessage(websocket.BinaryMessage, []byte(payload)); err != nil {
		t.Fatal(err)
	}
	if _, got, err := ws.ReadMessage(); err != nil || string(got) != payload {
		t.Fatalf("echo of %d bytes came back as %d bytes, %v", len(payload), len(got), err)
	}
}
