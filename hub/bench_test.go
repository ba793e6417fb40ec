package hub

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/signalr"
)

// The benchmarks compare the hub's Echo with a bare gorilla echo server on
// the same record, so the hub's own cost per message can be read off:
//
//	go test ./hub -run XXX -bench Echo -benchmem

// reportCPU adds the process CPU time per operation (client and server
// together, so differences between servers show up undiluted by waiting).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// startBareEcho serves a WebSocket that writes back every message it reads.
func startBareEcho(b *testing.B) string {
	b.Helper()
	up := websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			kind, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if ws.WriteMessage(kind, msg) != nil {
				return
			}
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "ws://" + ln.Addr().String() + "/"
}

func benchDial(b *testing.B, url string, handshake bool) *websocket.Conn {
	b.Helper()
	ws, _, err := websocket.DefaultDialer.DialContext(context.Background(), url, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	if handshake {
		_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"protocol":"json","version":1}`+"\x1e"))
		for n := 0; n < 2; { // {} and OnConnected, in one or two messages
			_, msg, err := ws.ReadMessage()
			if err != nil {
				b.Fatal(err)
			}
			n += strings.Count(string(msg), "\x1e")
		}
	}
	return ws
}

func benchHubURL(b *testing.B) string { return wiretest.WSURL(startBenchHub(b).URL(), "") }

// startBenchHub serves a default hub on loopback until the benchmark ends.
func startBenchHub(b *testing.B) *Server {
	h, err := New(Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := Start(context.Background(), "127.0.0.1:0", h)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	return srv
}

// roundTrips sends one record and waits for one record back, b.N times.
func roundTrips(b *testing.B, ws *websocket.Conn, record []byte) {
	roundTripsOf(b, ws, websocket.TextMessage, record)
}

func roundTripsOf(b *testing.B, ws *websocket.Conn, frameType int, record []byte) {
	b.SetBytes(int64(len(record)))
	b.ResetTimer()
	defer reportCPU(b, processCPU())
	for i := 0; i < b.N; i++ {
		if err := ws.WriteMessage(frameType, record); err != nil {
			b.Fatal(err)
		}
		if _, _, err := ws.ReadMessage(); err != nil {
			b.Fatal(err)
		}
	}
}

// pipelinedWindow bounds the records in flight, as a paced client would;
// without a bound both directions' socket buffers fill and TCP stalls.
const pipelinedWindow = 64

// pipelined keeps up to pipelinedWindow records in flight, b.N in all.
func pipelined(b *testing.B, ws *websocket.Conn, record []byte) {
	b.SetBytes(int64(len(record)))
	b.ResetTimer()
	defer reportCPU(b, processCPU())
	done := make(chan error, 1)
	window := make(chan struct{}, pipelinedWindow)
	go func() {
		for i := 0; i < b.N; i++ {
			window <- struct{}{}
			if err := ws.WriteMessage(websocket.TextMessage, record); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for got := 0; got < b.N; {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			b.Fatal(err)
		}
		n := strings.Count(string(msg), "\x1e")
		for i := 0; i < n; i++ {
			<-window
		}
		got += n
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

func BenchmarkEchoRoundTrip(b *testing.B) {
	for _, size := range wiretest.BlobSizes {
		record := wiretest.EchoRecord(size)
		b.Run(fmt.Sprintf("gorilla/blob=%d", size), func(b *testing.B) {
			roundTrips(b, benchDial(b, startBareEcho(b), false), record)
		})
		b.Run(fmt.Sprintf("hub/blob=%d", size), func(b *testing.B) {
			roundTrips(b, benchDial(b, benchHubURL(b), true), record)
		})
	}
}

func BenchmarkEchoPipelined(b *testing.B) {
	for _, size := range wiretest.BlobSizes {
		record := wiretest.EchoRecord(size)
		b.Run(fmt.Sprintf("gorilla/blob=%d", size), func(b *testing.B) {
			pipelined(b, benchDial(b, startBareEcho(b), false), record)
		})
		b.Run(fmt.Sprintf("hub/blob=%d", size), func(b *testing.B) {
			pipelined(b, benchDial(b, benchHubURL(b), true), record)
		})
	}
}

// BenchmarkEchoRoundTripMessagePack is BenchmarkEchoRoundTrip's hub case
// with the MessagePack hub protocol, whose values the hub converts to JSON
// text and back.
func BenchmarkEchoRoundTripMessagePack(b *testing.B) {
	for _, size := range wiretest.BlobSizes {
		var m signalr.Message
		if _, err := (signalr.JSONProtocol{}).ParseMessages(wiretest.EchoRecord(size), func(p *signalr.Message) error { m = *p; return nil }); err != nil {
			b.Fatal(err)
		}
		record, err := signalr.MessagePackProtocol{}.AppendMessage(nil, &m)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("hub/blob=%d", size), func(b *testing.B) {
			ws := benchDial(b, benchHubURL(b), false)
			_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"protocol":"messagepack","version":1}`+"\x1e"))
			if _, _, err := ws.ReadMessage(); err != nil { // {} and OnConnected
				b.Fatal(err)
			}
			roundTripsOf(b, ws, websocket.BinaryMessage, record)
		})
	}
}
