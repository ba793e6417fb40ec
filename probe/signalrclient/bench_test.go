package signalrclient

import (
	"context"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// BenchmarkSend measures the client's cost of one non-blocking invocation
// with a 1 KiB argument, against a hub that only drains.
func BenchmarkSend(b *testing.B) {
	h := newRawHub(b, func(t testing.TB, ws *websocket.Conn) {
		if acceptHandshake(t, ws) {
			for {
				if _, _, err := ws.NextReader(); err != nil {
					return
				}
			}
		}
	})
	c, err := Dial(context.Background(), Options{URL: h.url(), SkipNegotiation: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	arg := raw(`"` + strings.Repeat("x", 1024) + `"`)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := c.Send(ctx, "Echo", arg); err != nil {
			b.Fatal(err)
		}
	}
}
