package wpshub

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// eventHandler is an event handler on 127.0.0.1 that records what the hub
// sends it. By default it accepts the handshake and echoes each event's
// body with its Content-Type.
type eventHandler struct {
	srv *httptest.Server

	mu       sync.Mutex
	options  []*http.Request
	events   []*http.Request
	bodies   []string
	validate func(w http.ResponseWriter) // answers the handshake
	answer   func(w http.ResponseWriter, r *http.Request, body []byte)
}

func startEventHandler(t *testing.T) *eventHandler {
	t.Helper()
	e := &eventHandler{
		validate: func(w http.ResponseWriter) { w.Header().Set(webpubsub.HeaderAllowedOrigin, "*") },
		answer: func(w http.ResponseWriter, r *http.Request, body []byte) {
			w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
			_, _ = w.Write(body)
		},
	}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *eventHandler) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	validate, answer := e.validate, e.answer
	if r.Method == http.MethodOptions {
		e.options = append(e.options, r)
	} else {
		e.events = append(e.events, r)
		e.bodies = append(e.bodies, string(body))
	}
	e.mu.Unlock()
	if r.Method == http.MethodOptions {
		validate(w)
		return
	}
	answer(w, r, body)
}

// setAnswer replaces how events are answered.
func (e *eventHandler) setAnswer(answer func(w http.ResponseWriter, r *http.Request, body []byte)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.answer = answer
}

func (e *eventHandler) counts() (options, events int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.options), len(e.events)
}

func (e *eventHandler) template() string {
	return e.srv.URL + "/eventhandler/{hub}/{event}?code=secret"
}

func TestWebPubSubEventHandler(t *testing.T) {
	e := startEventHandler(t)
	h, srv, _ := startHub(t, Config{EventHandler: e.template()}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "Chat", webpubsub.ProtocolJSON, "alice")
	c.Send(`{"type":"event","event":"echo","ackId":1,"dataType":"text","data":"ping 1"}`)
	c.ExpectServerMessage("text", `"ping 1"`)
	c.ExpectAck(1, "")
	c.Send(`{"type":"event","event":"echo","ackId":2,"dataType":"json","data":{"n":2}}`)
	c.ExpectServerMessage("json", `{"n":2}`)
	c.ExpectAck(2, "")
	c.Send(`{"type":"event","event":"echo","dataType":"binary","data":"AAE="}`) // no ackId: no ack
	c.ExpectServerMessage("binary", `"AAE="`)

	options, events := e.counts()
	if options != 1 || events != 3 {
		t.Fatalf("handler saw %d handshakes and %d events, want 1 and 3", options, events)
	}
	hs := e.options[0]
	host := strings.TrimPrefix(srv.Origin(), "http://")
	if hs.URL.Path != "/eventhandler/chat/validate" || hs.URL.Query().Get("code") != "secret" ||
		hs.Header.Get(webpubsub.HeaderRequestOrigin) != host || hs.Header.Get(webpubsub.HeaderAWPSVersion) != "1.0" {
		t.Errorf("handshake = %s %v", hs.URL, hs.Header)
	}
	checkUserEvent(t, e.events[0], host, c.Connected.ConnectionID, "text/plain")
	checkUserEvent(t, e.events[1], host, c.Connected.ConnectionID, "application/json")
	checkUserEvent(t, e.events[2], host, c.Connected.ConnectionID, "application/octet-stream")
	if e.bodies[0] != "ping 1" || e.bodies[1] != `{"n":2}` || e.bodies[2] != "\x00\x01" {
		t.Errorf("bodies = %q", e.bodies)
	}
	for _, tc := range []struct {
		request, result string
		want            float64
	}{{"validate", upstreamOK, 1}, {"event", upstreamOK, 3}, {"event", upstreamRefused, 0}} {
		if got := testutil.ToFloat64(h.events.requests.WithLabelValues(tc.request, tc.result)); got != tc.want {
			t.Errorf("event_handler_requests{%s,%s} = %v, want %v", tc.request, tc.result, got, tc.want)
		}
	}
}

// checkUserEvent checks the CloudEvents attributes of an "echo" event from
// connID, alice, in hub chat, and its signature under the hub's key.
func checkUserEvent(t *testing.T, r *http.Request, origin, connID, contentType string) {
	t.Helper()
	ev, err := webpubsub.ParseCloudEvent(r.Header)
	if err != nil {
		t.Fatalf("event headers %v: %v", r.Header, err)
	}
	want := webpubsub.CloudEvent{
		SpecVersion: "1.0", Type: "azure.webpubsub.user.echo", Source: "/hubs/chat/client/" + connID,
		AWPSVersion: "1.0", Hub: "chat", EventName: "echo", ConnectionID: connID, UserID: "alice",
		Subprotocol: webpubsub.ProtocolJSON, Origin: origin,
	}
	got := *ev
	got.ID, got.Time, got.Signature, got.DataType = "", "", "", 0
	if got != want {
		t.Errorf("event = %+v\nwant    %+v", got, want)
	}
	if _, err := time.Parse(time.RFC3339Nano, ev.Time); err != nil || ev.ID == "" {
		t.Errorf("ce-id %q, ce-time %q", ev.ID, ev.Time)
	}
	if !webpubsub.VerifySignature(ev.Signature, connID, []string{wiretest.AccessKey}) {
		t.Errorf("ce-signature %q does not verify", ev.Signature)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/eventhandler/chat/echo" || r.Header.Get("Content-Type") != contentType {
		t.Errorf("%s %s Content-Type %q, want POST /eventhandler/chat/echo %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"), contentType)
	}
}

func TestWebPubSubEventHandlerAnswers(t *testing.T) {
	e := startEventHandler(t)
	_, srv, _ := startHub(t, Config{EventHandler: e.template()}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	e.setAnswer(func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusNoContent) })
	c.Send(`{"type":"event","event":"quiet","ackId":1,"data":1}`)
	c.ExpectAck(1, "") // 204: nothing delivered, only the ack

	e.setAnswer(func(w http.ResponseWriter, _ *http.Request, _ []byte) { _, _ = w.Write([]byte("untyped")) })
	c.Send(`{"type":"event","event":"untyped","ackId":2,"data":1}`)
	c.ExpectServerMessage("text", `"untyped"`) // Go sniffs text/plain; charset=utf-8
	c.ExpectAck(2, "")

	e.setAnswer(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{not json"))
	})
	c.Send(`{"type":"event","event":"broken","ackId":3,"data":1}`)
	c.ExpectAck(3, webpubsub.ErrorInvocationFailed)

	e.setAnswer(func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusInternalServerError) })
	c.Send(`{"type":"event","event":"fails","ackId":4,"data":1}`)
	if f := c.ExpectAck(4, webpubsub.ErrorInvocationFailed); f.Error.Message != "The event handler answered 500." {
		t.Errorf("ack message = %q", f.Error.Message)
	}
	// Without an ackId a refused event drops the connection, as the
	// service does.
	c.Send(`{"type":"event","event":"fails","data":1}`)
	c.ExpectDisconnected("The event handler answered 500.", websocket.ClosePolicyViolation)
}

func TestWebPubSubHandshakeRefused(t *testing.T) {
	e := startEventHandler(t)
	e.validate = func(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) } // no WebHook-Allowed-Origin
	h, srv, _ := startHub(t, Config{EventHandler: e.template()}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	c.Send(`{"type":"event","event":"echo","ackId":1,"data":1}`)
	f := c.ExpectAck(1, webpubsub.ErrorInvocationFailed)
	want := "Abuse protection for '" + e.srv.URL + "/eventhandler/chat/validate' missing allowed origins: ."
	if f.Error.Message != want {
		t.Errorf("ack message = %q\nwant          %q", f.Error.Message, want)
	}
	c.Send(`{"type":"event","event":"echo","data":1}`) // dropped, the connection stays
	c.Send(`{"type":"event","event":"echo","ackId":2,"data":1}`)
	c.ExpectAck(2, webpubsub.ErrorInvocationFailed)
	if options, events := e.counts(); options != 1 || events != 0 {
		t.Fatalf("handler saw %d handshakes and %d events, want 1 (cached) and 0", options, events)
	}
	if got := testutil.ToFloat64(h.events.requests.WithLabelValues("validate", upstreamRefused)); got != 1 {
		t.Errorf("event_handler_requests{validate,refused} = %v, want 1", got)
	}
}

// A refused handshake stands for a while, then the next event asks again.
func TestWebPubSubHandshakeRetried(t *testing.T) {
	e := startEventHandler(t)
	refuse := func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }
	e.validate = refuse
	h, srv, _ := startHub(t, Config{EventHandler: e.template()}, core.Config{})
	h.events.retry = 100 * time.Millisecond
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	c.Send(`{"type":"event","event":"echo","ackId":1,"data":1}`)
	c.ExpectAck(1, webpubsub.ErrorInvocationFailed)
	e.mu.Lock()
	e.validate = func(w http.ResponseWriter) { w.Header().Set(webpubsub.HeaderAllowedOrigin, "*") }
	e.mu.Unlock()
	c.Send(`{"type":"event","event":"echo","ackId":2,"data":1}`)
	c.ExpectAck(2, webpubsub.ErrorInvocationFailed) // the refusal still stands
	time.Sleep(150 * time.Millisecond)
	c.Send(`{"type":"event","event":"echo","ackId":3,"data":2}`)
	c.ExpectServerMessage("json", "2")
	c.ExpectAck(3, "")
	if options, events := e.counts(); options != 2 || events != 1 {
		t.Fatalf("handler saw %d handshakes and %d events, want 2 and 1", options, events)
	}
}

func TestWebPubSubHandshakeFailedStatus(t *testing.T) {
	e := startEventHandler(t)
	e.validate = func(w http.ResponseWriter) { w.WriteHeader(http.StatusUnauthorized) }
	_, srv, _ := startHub(t, Config{EventHandler: e.template()}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	c.Send(`{"type":"event","event":"echo","ackId":1,"data":1}`)
	want := "Abuse protection for '" + e.srv.URL + "/eventhandler/chat/validate' failed: 401."
	if f := c.ExpectAck(1, webpubsub.ErrorInvocationFailed); f.Error.Message != want {
		t.Errorf("ack message = %q, want %q", f.Error.Message, want)
	}
}

func TestWebPubSubNoEventHandler(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", webpubsub.ProtocolJSON, "")
	c.Send(`{"type":"event","event":"echo","data":1}`) // dropped
	c.Send(`{"type":"event","event":"echo","ackId":1,"data":1}`)
	c.ExpectAck(1, webpubsub.ErrorInvocationFailed)
}

// A client without a subprotocol is a simple WebSocket client: each frame
// is a "message" event, and what it receives is the data itself.
func TestWebPubSubSimpleClient(t *testing.T) {
	e := startEventHandler(t)
	_, srv, _ := startHub(t, Config{EventHandler: e.template()}, core.Config{})
	c := wiretest.ConnectWPS(t, srv, "chat", "", "")
	c.Send("plain text")
	if kind, data, err := c.Read(wiretest.Timeout); err != nil || kind != websocket.TextMessage || string(data) != "plain text" {
		t.Fatalf("got %d %q %v, want the text echoed", kind, data, err)
	}
	if err := c.WS.WriteMessage(websocket.BinaryMessage, []byte{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if kind, data, err := c.Read(wiretest.Timeout); err != nil || kind != websocket.BinaryMessage || string(data) != "\x00\x01\x02" {
		t.Fatalf("got %d %q %v, want the bytes echoed", kind, data, err)
	}
	e.mu.Lock()
	ev := e.events[0]
	e.mu.Unlock()
	if ev.Header.Get(webpubsub.HeaderType) != "azure.webpubsub.user.message" || ev.Header.Get(webpubsub.HeaderSubprotocol) != "" {
		t.Errorf("simple client's event headers: %v", ev.Header)
	}
	api := wiretest.NewRESTAPI(t, srv, "chat")
	api.Expect(api.API.SendToAll(), "application/json", `{"a":1}`, http.StatusAccepted)
	if kind, data, err := c.Read(wiretest.Timeout); err != nil || kind != websocket.TextMessage || string(data) != `{"a":1}` {
		t.Fatalf("got %d %q %v, want the JSON as text", kind, data, err)
	}
}

// With local auth disabled the hub sends user events without
// ce-signature, as the service does: there is no access key to sign with.
func TestDisableLocalAuthSendsUnsignedEvents(t *testing.T) {
	e := startEventHandler(t)
	_, srv, rig := startEntraHub(t, Config{EventHandler: e.template()}, core.Config{DisableLocalAuth: true})
	bearer := rig.Token(t, wiretest.EntraApp, core.WebPubSubResource)
	token := wiretest.GenerateToken(t, srv, "/api/hubs/chat/:generateToken?api-version=2024-12-01&userId=frank", bearer)
	c, resp, err := wiretest.DialWPS(t, wiretest.ClientURL(srv, "chat"), webpubsub.ProtocolJSON, token)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	c.Next() // connected
	c.Send(`{"type":"event","event":"echo","dataType":"text","data":"ping"}`)
	c.ExpectServerMessage("text", `"ping"`)
	if _, events := e.counts(); events != 1 {
		t.Fatalf("handler saw %d events, want 1", events)
	}
	if sig := e.events[0].Header.Values(webpubsub.HeaderSignature); len(sig) != 0 {
		t.Errorf("ce-signature %q sent with local auth disabled", sig)
	}
}
