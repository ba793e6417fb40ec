package signalrclient

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Over server-sent events and long polling the round trip is a GET of the
// connection URL without its id, with the connection's headers and
// token, which the dispatcher refuses (400) before any hub code runs. The
// refusal is by design: no HTTP response of the connection's to count.
func TestHTTPTransportsRoundTripRequest(t *testing.T) {
	for _, kind := range []string{TransportSSE, TransportLongPolling} {
		h := newFakeHub(t, kind)
		obs := &recordingObserver{}
		h.mustDial(t, obs, func(o *Options) {
			o.RoundTripInterval, o.Headers = 20*time.Millisecond, http.Header{"X-Probe": {"1"}}
		})
		rtts := obs.WaitRoundTrips(t, 2, 3*time.Second)
		h.mu.Lock()
		asked := append([]seenRequest(nil), h.roundTrips...)
		h.mu.Unlock()
		if len(asked) < len(rtts) {
			t.Fatalf("%s: %d round trips from %d requests, want a request each", kind, len(rtts), len(asked))
		}
		r := asked[0]
		if r.query != "hub=chat" || r.header.Get("Authorization") != "Bearer bearer-secret" || r.header.Get("X-Probe") != "1" {
			t.Errorf("%s: round trip GET ?%s with headers %v; want the connection URL without id, and its headers", kind, r.query, r.header)
		}
		if got := strings.Join(obs.responses(), ","); strings.Contains(got, "400") {
			t.Errorf("%s: the round trips' refusals were counted as responses: %s", kind, got)
		}
	}
}
