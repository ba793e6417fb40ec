package signalrclient

import (
	"errors"
	"net/url"
	"testing"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// FuzzNegotiateResponse feeds arbitrary bytes through everything that reads a
// negotiate answer: decoding, the v0/v1 id rules and the transport choice.
// Whatever the server sends, the outcome is a negotiation or a
// *clientconn.ConnectError in the negotiate phase, never a panic.
func FuzzNegotiateResponse(f *testing.F) {
	for _, seed := range []string{
		`{"connectionId":"a","connectionToken":"b","negotiateVersion":1,"availableTransports":[{"transport":"WebSockets","transferFormats":["Text","Binary"]}]}`,
		`{"connectionId":"a","availableTransports":[{"transport":"ServerSentEvents","transferFormats":["Text"]},{"transport":"LongPolling","transferFormats":["Text","Binary"]}]}`,
		`{"url":"https://x.service.signalr.net/client/?hub=h","accessToken":"t"}`,
		`{"error":"nope"}`,
		`{"ProtocolVersion":"1.5"}`,
		`{"useStatefulReconnect":true,"connectionId":"a"}`,
		`{"availableTransports":[{"transport":null,"transferFormats":[1,2]}]}`,
		`[]`, `null`, ``, `{`,
	} {
		f.Add([]byte(seed))
	}
	endpoint, _ := url.Parse("http://127.0.0.1:1/hub")
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := decodeNegotiateResponse(body)
		if err != nil {
			assertNegotiateError(t, err)
			return
		}
		n, err := finishNegotiation(endpoint, "", resp)
		if err != nil {
			assertNegotiateError(t, err)
			return
		}
		for _, format := range []signalr.TransferFormat{signalr.TextFormat, signalr.BinaryFormat} {
			name, err := chooseTransport(n, []string{TransportWebSockets, TransportSSE, TransportLongPolling}, format)
			if err == nil && name == "" {
				t.Fatal("no transport and no error")
			}
		}
	})
}

func assertNegotiateError(t *testing.T, err error) {
	t.Helper()
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseNegotiate {
		t.Fatalf("error %v is not a negotiate-phase clientconn.ConnectError", err)
	}
}
