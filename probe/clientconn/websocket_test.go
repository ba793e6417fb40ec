package clientconn

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/internal/localtest"
)

// h2UpgradeServer upgrades every request, on 127.0.0.1 over TLS with
// HTTP/2 offered too, as production front ends do, and tells the client
// the protocol the upgrade came over.
func h2UpgradeServer(t *testing.T) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: l, EnableHTTP2: true, Config: &http.Server{
		ErrorLog: log.New(io.Discard, "", 0), // the untrusting dial's TLS error
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
			if err != nil {
				return
			}
			_ = ws.WriteMessage(websocket.TextMessage, []byte(r.Proto))
			_ = ws.Close()
		}),
	}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestWebSocketDialerTakesTheClientsTLSOverHTTP1(t *testing.T) {
	srv := h2UpgradeServer(t)
	client := srv.Client() // trusts the server's CA and attempts HTTP/2
	t.Cleanup(client.CloseIdleConnections)
	d := Settings{HTTPClient: client, HandshakeTimeout: 5 * time.Second}.WebSocketDialer()
	if d.ReadBufferSize != WebSocketReadBufferSize || d.WriteBufferPool != &WebSocketWriteBufferPool || d.HandshakeTimeout != 5*time.Second {
		t.Errorf("dialer: read buffer %d, shared write pool %v, handshake timeout %s", d.ReadBufferSize, d.WriteBufferPool == &WebSocketWriteBufferPool, d.HandshakeTimeout)
	}
	url := "wss" + strings.TrimPrefix(srv.URL, "https")
	ws, _, err := d.DialContext(localtest.Ctx(t, 5*time.Second), url, nil)
	if err != nil {
		t.Fatalf("upgrade with the client's TLS: %v", err)
	}
	defer ws.Close()
	_, proto, err := ws.ReadMessage()
	if err != nil || string(proto) != "HTTP/1.1" {
		t.Errorf("the upgrade came over %q (%v), want HTTP/1.1", proto, err)
	}
	if got := client.Transport.(*http.Transport).TLSClientConfig.NextProtos; len(got) > 0 && got[0] != "h2" {
		t.Errorf("the client's own TLS config changed: NextProtos %q", got)
	}

	// Without the client, the server's CA is not trusted: the TLS
	// settings above were the client's.
	plain := Settings{HandshakeTimeout: 5 * time.Second}.WebSocketDialer()
	if _, _, err := plain.DialContext(localtest.Ctx(t, 5*time.Second), url, nil); err == nil {
		t.Error("a dialer without the client trusted the test CA")
	}
}
