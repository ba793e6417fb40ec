package aspnethub

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/core"
)

func TestWebSocketsEchoAndResult(t *testing.T) {
	r := startRig(t, Config{}, core.Config{})
	n := r.negotiate()
	if n.ProtocolVersion != "2.0" || n.URL != "/signalr" || *n.KeepAliveTimeout != 30 {
		t.Fatalf("negotiate: %+v", n)
	}
	ws := r.dialWebSocket(n.ConnectionToken)
	if body, _ := r.do(http.MethodGet, r.url(aspnet.PathStart, aspnet.WebSockets, n.ConnectionToken), nil); aspnet.CheckStartResponse(body) != nil {
		t.Fatalf("start: %s", body)
	}
	echoOverWebSocket(t, ws)
	m := r.hub.Metrics
	if got := [3]float64{testutil.ToFloat64(m.Received), testutil.ToFloat64(m.Sent), testutil.ToFloat64(m.Connections)}; got != [3]float64{1, 1, 1} {
		t.Fatalf("received, sent, connections = %v, want 1 1 1", got)
	}
}

func TestServerSentEventsBroadcast(t *testing.T) {
	r := startRig(t, Config{}, core.Config{})
	a, b := r.negotiate(), r.negotiate()
	streamA := r.openStream(r.url(aspnet.PathConnect, aspnet.ServerSentEvents, a.ConnectionToken))
	streamB := r.openStream(r.url(aspnet.PathConnect, aspnet.ServerSentEvents, b.ConnectionToken))
	for _, s := range []*eventReader{{r: streamA}, {r: streamB}} {
		if got := s.next(t); got != aspnet.SSEInitializedData {
			t.Fatalf("first event %q", got)
		}
		if !envelope(t, []byte(s.next(t))).Initialized {
			t.Fatal("no init envelope")
		}
	}
	if res := r.send(aspnet.ServerSentEvents, a.ConnectionToken, `{"H":"signalrbench","M":"Broadcast","A":[7,"eA=="],"I":3}`); res.ID != "3" || res.HasError {
		t.Fatalf("result %+v", res)
	}
	for _, s := range []*eventReader{{r: streamA}, {r: streamB}} {
		e := envelope(t, []byte(s.next(t)))
		if len(e.Messages) != 1 || measureArgs(t, e.Messages[0]) != `7,"eA=="` || e.Cursor != "1" {
			t.Fatalf("got %+v", e)
		}
	}
	if got := testutil.ToFloat64(r.hub.Metrics.Sent); got != 2 {
		t.Fatalf("sent %v, want 2 (one per receiver)", got)
	}
}

func TestLongPollingGroupsAndTokens(t *testing.T) {
	r := startRig(t, Config{}, core.Config{})
	n := r.negotiate()
	tok := n.ConnectionToken
	body, _ := r.do(http.MethodPost, r.url(aspnet.PathConnect, aspnet.LongPolling, tok), url.Values{})
	init := envelope(t, body)
	if !init.Initialized || init.Cursor != "0" {
		t.Fatalf("connect: %s", body)
	}
	if res := r.send(aspnet.LongPolling, tok, `{"H":"signalrbench","M":"JoinGroup","A":["g1"],"I":1}`); res.HasError {
		t.Fatalf("join: %+v", res)
	}
	body, _ = r.do(http.MethodPost, r.url(aspnet.PathPoll, aspnet.LongPolling, tok), url.Values{"messageId": {"0"}})
	groups := envelope(t, body).GroupsToken
	if groups == "" {
		t.Fatalf("no groups token after a join: %s", body)
	}
	r.send(aspnet.LongPolling, tok, `{"H":"signalrbench","M":"GroupBroadcast","A":["g1",9,"eQ=="],"I":2}`)
	body, _ = r.do(http.MethodPost, r.url(aspnet.PathPoll, aspnet.LongPolling, tok), url.Values{"messageId": {"0"}, "groupsToken": {groups}})
	if e := envelope(t, body); len(e.Messages) != 1 || measureArgs(t, e.Messages[0]) != `9,"eQ=="` {
		t.Fatalf("poll: %s", body)
	}
	tampered := groups[:len(groups)-2] + "AA"
	if body, status := r.do(http.MethodPost, r.url(aspnet.PathPoll, aspnet.LongPolling, tok), url.Values{"messageId": {"1"}, "groupsToken": {tampered}}); status != http.StatusBadRequest || string(body) != errMsgBadGroupsToken {
		t.Fatalf("a tampered groups token gave %d %s", status, body)
	}
}

func TestTokensAreRefusedWhenTampered(t *testing.T) {
	r := startRig(t, Config{}, core.Config{})
	n := r.negotiate()
	r.do(http.MethodPost, r.url(aspnet.PathConnect, aspnet.LongPolling, n.ConnectionToken), url.Values{})
	bad := []string{n.ConnectionToken + "x", "x" + n.ConnectionToken, strings.Replace(n.ConnectionToken, ".", "", 1), r.hub.signer.protect(purposeGroups, "id:")}
	for _, tok := range bad {
		if body, status := r.do(http.MethodGet, r.url(aspnet.PathStart, aspnet.LongPolling, tok), nil); status != http.StatusBadRequest || string(body) != errMsgBadToken {
			t.Errorf("token %q gave %d %s", tok, status, body)
		}
	}
	if body, _ := r.do(http.MethodGet, r.url(aspnet.PathStart, aspnet.LongPolling, n.ConnectionToken), nil); string(body) != aspnet.StartResponse {
		t.Fatalf("start: %s", body)
	}
	r.do(http.MethodPost, r.url(aspnet.PathAbort, aspnet.LongPolling, n.ConnectionToken), nil)
	if got := testutil.ToFloat64(r.hub.Metrics.Connections); got != 0 {
		t.Fatalf("connections after abort %v", got)
	}
	if _, status := r.do(http.MethodPost, r.url(aspnet.PathReconnect, aspnet.LongPolling, n.ConnectionToken), url.Values{}); status != http.StatusBadRequest {
		t.Fatalf("a reconnect after abort gave %d", status)
	}
}

func TestForeverFrameKeepAliveAndDisconnectTimeout(t *testing.T) {
	r := startRig(t, Config{DisconnectTimeout: 200 * time.Millisecond}, core.Config{KeepAliveInterval: 50 * time.Millisecond})
	n := r.negotiate()
	stream := r.openStream(r.url(aspnet.PathConnect, aspnet.ForeverFrame, n.ConnectionToken, "frameId", "7"))
	ff := &scriptReader{r: stream}
	if id := ff.preamble(t); id != 7 {
		t.Fatalf("frame id %d", id)
	}
	if !envelope(t, ff.next(t)).Initialized {
		t.Fatal("no init envelope")
	}
	if got := string(ff.next(t)); got != aspnet.KeepAlive {
		t.Fatalf("expected a keep-alive, got %s", got)
	}
	if _, status := r.do(http.MethodGet, r.url(aspnet.PathConnect, aspnet.ForeverFrame, n.ConnectionToken, "frameId", "x"), nil); status != http.StatusBadRequest {
		t.Fatalf("a second connect gave %d", status)
	}
	r.do(http.MethodPost, r.url(aspnet.PathAbort, aspnet.ForeverFrame, n.ConnectionToken), nil)
	// A connection whose transport went away ends after the disconnect timeout.
	m := r.negotiate()
	r.do(http.MethodPost, r.url(aspnet.PathConnect, aspnet.LongPolling, m.ConnectionToken), url.Values{})
	deadline := time.Now().Add(3 * time.Second)
	for testutil.ToFloat64(r.hub.Metrics.Connections) != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := testutil.ToFloat64(r.hub.Metrics.Connections); got != 0 {
		t.Fatalf("connections %v after the disconnect timeout", got)
	}
}
