package webpubsubclient

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

func TestRefusedUpgradeIsClassified(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		reason string
	}{
		{429, throttle.ConnectionLimitText, throttle.ConnectionLimit},
		{429, "Too many requests", throttle.HTTP429},
		{401, "Unauthorized", ""},
	} {
		svc := newTestService(t, newMiniHub().serve, func(s *testService) {
			s.beforeUpgrade = func(w http.ResponseWriter, r *http.Request) bool {
				http.Error(w, c.body, c.status)
				return true
			}
		})
		obs := &recordingObserver{}
		o := svc.options("u", webpubsub.ProtocolJSON)
		o.Observer = obs
		_, err := Dial(localtest.Ctx(t, 5*time.Second), o)
		var ce *clientconn.ConnectError
		if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTransport || ce.StatusCode != c.status || !strings.Contains(ce.Body, c.body) {
			t.Errorf("HTTP %d: err %v, want a transport ConnectError with status and body", c.status, err)
		}
		reason, throttled := clientconn.ClassifyThrottle(err)
		if reason != c.reason || throttled != (c.reason != "") {
			t.Errorf("HTTP %d %q: ClassifyThrottle = %q, %v; want %q", c.status, c.body, reason, throttled, c.reason)
		}
		if got := obs.responses(); got != "upgrade "+strconv.Itoa(c.status) {
			t.Errorf("observer saw %q", got)
		}
		noSecret(t, err, o.AccessToken)
	}
}

func TestWrongTokenIsRefused(t *testing.T) {
	svc := newTestService(t, newMiniHub().serve)
	o := svc.options("u", webpubsub.ProtocolJSON)
	o.AccessToken += "x"
	_, err := Dial(localtest.Ctx(t, 5*time.Second), o)
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.StatusCode != 401 {
		t.Fatalf("err %v, want HTTP 401", err)
	}
	noSecret(t, err, o.AccessToken)
}

func TestDisconnectedIsClassified(t *testing.T) {
	cases := []struct{ message, reason string }{
		{"Connection count reaches limit", throttle.ConnectionLimit},
		{throttle.MessageLimitText, throttle.MessageLimit},
		{"Connection throttled by the service", throttle.Closed},
		{"Service reloading, reconnect", ""},
	}
	for _, k := range cases {
		// Instead of connected: Dial fails in the handshake.
		svc := newTestService(t, func(s *svcConn) {
			_ = s.send(&webpubsub.Frame{Kind: webpubsub.KindDisconnected, Message: k.message})
			s.closeCode()
		})
		_, err := Dial(localtest.Ctx(t, 5*time.Second), svc.options("u", webpubsub.ProtocolJSON))
		var ce *clientconn.ConnectError
		var closeErr *clientconn.CloseError
		if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseHandshake || !errors.As(err, &closeErr) || closeErr.Message != k.message {
			t.Errorf("%q before connected: %v", k.message, err)
		}
		if reason, ok := clientconn.ClassifyThrottle(err); reason != k.reason || ok != (k.reason != "") {
			t.Errorf("%q before connected: ClassifyThrottle = %q, %v", k.message, reason, ok)
		}
		checkDisconnectedLater(t, k.message, k.reason)
	}
}

// checkDisconnectedLater: a disconnected message on an open connection
// ends it with a CloseError, answered with close 1000, and fails a
// request waiting for its ack.
func checkDisconnectedLater(t *testing.T, message, reason string) {
	t.Helper()
	codes := make(chan int, 1)
	svc := newTestService(t, func(s *svcConn) {
		if s.connected() != nil {
			return
		}
		if f, err := s.read(); err != nil || f.Kind != webpubsub.KindJoinGroup {
			return
		}
		_ = s.send(&webpubsub.Frame{Kind: webpubsub.KindDisconnected, Message: message})
		codes <- s.closeCode()
	})
	c := svc.dial(t, svc.options("u", webpubsub.ProtocolJSONReliable))
	err := c.JoinGroup(context.Background(), "g")
	var closeErr *clientconn.CloseError
	if !errors.Is(err, clientconn.ErrClosed) || !errors.As(err, &closeErr) || closeErr.Message != message {
		t.Errorf("pending join: %v, want ErrClosed with the CloseError", err)
	}
	localtest.WaitDone(t, c, 3*time.Second)
	if got, ok := clientconn.ClassifyThrottle(c.Err()); got != reason || ok != (reason != "") {
		t.Errorf("%q: ClassifyThrottle(Err()) = %q, %v", message, got, ok)
	}
	if code := <-codes; code != websocket.CloseNormalClosure {
		t.Errorf("client answered disconnected with close %d", code)
	}
}

func TestWebSocketCloseReasonIsClassified(t *testing.T) {
	svc := newTestService(t, func(s *svcConn) {
		if s.connected() == nil {
			_ = s.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, throttle.ConnectionLimitText), time.Now().Add(time.Second))
			s.closeCode()
		}
	})
	c := svc.dial(t, svc.options("u", webpubsub.ProtocolJSON))
	localtest.WaitDone(t, c, 3*time.Second)
	if reason, ok := clientconn.ClassifyThrottle(c.Err()); !ok || reason != throttle.ConnectionLimit || !strings.Contains(c.Err().Error(), "1008") {
		t.Errorf("Err %v classified %q, %v", c.Err(), reason, ok)
	}
}
