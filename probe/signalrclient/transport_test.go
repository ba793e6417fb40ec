package signalrclient

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// TestTransportSelection: negotiate picks exactly the transport asked
// for, falls back only to the ones listed, and says what the server
// offers when nothing fits.
func TestTransportSelection(t *testing.T) {
	const (
		wsText  = `{"transport":"WebSockets","transferFormats":["Text"]}`
		sse     = `{"transport":"ServerSentEvents","transferFormats":["Text"]}`
		lpText  = `{"transport":"LongPolling","transferFormats":["Text"]}`
		lpBoth  = `{"transport":"LongPolling","transferFormats":["Text","Binary"]}`
		noMatch = ""
	)
	for _, tc := range []struct {
		name      string
		offer     string
		transport string
		fallbacks []string
		binary    bool
		want      string // the transport chosen, or a piece of the error
	}{
		{"sse as asked", sse + "," + lpBoth, "sse", nil, false, TransportSSE},
		{"negotiate names accepted", sse + "," + lpBoth, "LongPolling", nil, false, TransportLongPolling},
		{"no fallback unless listed", wsText + "," + lpBoth, "sse", nil, false,
			"server does not offer the ServerSentEvents transport (it offers WebSockets[Text], LongPolling[Text,Binary])"},
		{"fallback in order", lpBoth + "," + sse, "websockets", []string{"sse", "longpolling"}, false, TransportSSE},
		{"fallback skips what is not offered", lpBoth, "websockets", []string{"sse", "longpolling"}, false, TransportLongPolling},
		{"transfer format checked", wsText + "," + lpText, "longpolling", nil, true,
			"server offers LongPolling without the Binary transfer format"},
		{"every reason given", wsText, "longpolling", []string{"websockets"}, true,
			"server does not offer the LongPolling transport; server offers WebSockets without the Binary transfer format"},
		{"nothing offered", noMatch, "websockets", nil, false, "(it offers no transports)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &negotiation{}
			if err := json.Unmarshal([]byte(`[`+tc.offer+`]`), &n.transports); err != nil {
				t.Fatal(err)
			}
			o := Options{URL: "http://h/hub", Transport: tc.transport, FallbackTransports: tc.fallbacks}
			if tc.binary {
				o.Protocol = signalr.MessagePackProtocol{}
			}
			o, err := o.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			candidates, _ := o.transportCandidates()
			got, err := chooseTransport(n, candidates, o.Protocol.TransferFormat())
			var ce *clientconn.ConnectError
			switch {
			case err == nil && got != tc.want:
				t.Errorf("chose %s, want %s", got, tc.want)
			case err != nil && (!errors.As(err, &ce) || ce.Phase != clientconn.PhaseNegotiate || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want a negotiate error with %q", err, tc.want)
			}
		})
	}
}

// TestDialFallsBackToLongPolling dials a hub that offers only long
// polling, asking for WebSockets with long polling as the fallback.
func TestDialFallsBackToLongPolling(t *testing.T) {
	h := newFakeHub(t, TransportLongPolling)
	h.offer = `[{"transport":"LongPolling","transferFormats":["Text","Binary"]}]`
	c := h.mustDial(t, nil, func(o *Options) {
		o.Transport = ""
		o.FallbackTransports = []string{"longpolling"}
	})
	if c.Transport() != TransportLongPolling {
		t.Errorf("transport %s", c.Transport())
	}
	if err := c.Send(testCtx(t, time.Second), "X"); err != nil {
		t.Fatal(err)
	}
	if got := h.nextPost(t); got != "{\"type\":1,\"target\":\"X\",\"arguments\":[]}\x1e" {
		t.Errorf("POST %q", got)
	}
}
