package signalrclient

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// BenchmarkSendSSE measures one non-blocking invocation with a 1 KiB
// argument over server-sent events, against a hub that only drains: the
// client's share of queueing and batched POSTs, all acknowledged.
func BenchmarkSendSSE(b *testing.B) {
	handshake := make(chan struct{}, 1)
	var posts atomic.Int64
	srv := newLocalServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/negotiate"):
			io.WriteString(w, `{"negotiateVersion":1,"connectionId":"a","connectionToken":"b","availableTransports":[{"transport":"ServerSentEvents","transferFormats":["Text"]}]}`)
		case r.Method == http.MethodPost:
			posts.Add(1)
			var head [11]byte
			n, _ := io.ReadFull(r.Body, head[:])
			_, _ = io.Copy(io.Discard, r.Body)
			if string(head[:n]) == `{"protocol"` {
				handshake <- struct{}{}
			}
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush()
			select {
			case <-handshake:
				io.WriteString(w, "data: {}\x1e\r\n\r\n")
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
			<-r.Context().Done()
		}
	}))
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	c, err := Dial(context.Background(), Options{URL: srv.URL + "/hub", Transport: TransportSSE, Settings: clientconn.Settings{HTTPClient: client}})
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
	if err := c.CheckAlive(ctx, 10*time.Second); err != nil { // waits for every POST
		b.Fatal(err)
	}
	b.ReportMetric(float64(posts.Load())/float64(b.N), "POSTs/op")
}
