package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/aspnethub"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
)

// BenchmarkEchoRoundTripClassic is BenchmarkEchoRoundTrip's hub case on
// the classic side (/signalr, WebSockets): the Echo the probe's classic
// kinds send, the payload as a JSON string, answered by its result and
// the Measure call, two messages.
func BenchmarkEchoRoundTripClassic(b *testing.B) {
	for _, size := range wiretest.BlobSizes {
		payload, _ := json.Marshal(string(wiretest.EchoRecord(size)))
		record := []byte(`{"H":"signalrbench","M":"Echo","A":[1712345678901,` + string(payload) + `],"I":0}`)
		b.Run(fmt.Sprintf("hub/blob=%d", size), func(b *testing.B) {
			ws := benchDialClassic(b, wiretest.WSURL(startBenchHub(b).Origin()+aspnethub.DefaultPath, ""))
			b.SetBytes(int64(len(record)))
			b.ResetTimer()
			defer reportCPU(b, processCPU())
			for i := 0; i < b.N; i++ {
				if err := ws.WriteMessage(websocket.TextMessage, record); err != nil {
					b.Fatal(err)
				}
				for range 2 { // the result and the Measure call
					if _, _, err := ws.ReadMessage(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// benchDialClassic negotiates a classic connection at wsBase (ws://…/signalr),
// connects it over WebSockets and reads its init envelope.
func benchDialClassic(b *testing.B, wsBase string) *websocket.Conn {
	b.Helper()
	q := url.Values{aspnet.QueryClientProtocol: {aspnet.ClientProtocol},
		aspnet.QueryConnectionData: {string(aspnet.AppendConnectionData(nil, "Signalrbench"))}}
	res, err := http.Get("http" + strings.TrimPrefix(wsBase, "ws") + aspnet.PathNegotiate + "?" + q.Encode())
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	n, err := aspnet.DecodeNegotiate(body)
	if err != nil {
		b.Fatalf("negotiate: %s %v", body, err)
	}
	q.Set(aspnet.QueryTransport, string(aspnet.WebSockets))
	q.Set(aspnet.QueryConnectionToken, n.ConnectionToken)
	ws, _, err := websocket.DefaultDialer.DialContext(context.Background(), wsBase+aspnet.PathConnect+"?"+q.Encode(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	if _, _, err := ws.ReadMessage(); err != nil { // the init envelope
		b.Fatal(err)
	}
	return ws
}
