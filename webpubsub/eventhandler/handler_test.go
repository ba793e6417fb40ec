package eventhandler

import (
	"bytes"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/webpubsub"
)

func serve(t *testing.T, opts Options) (*Handler, string) {
	t.Helper()
	h := New(opts)
	h.SetHubs(map[string][]string{testHub: {testKey}})
	srv := localtest.Server(t, h)
	return h, srv.URL
}

// handlerCases are requests and hubprobe's answers to them, all pinned:
// the handshake and the events as express answers them, refusals as
// documented.
var handlerCases = []struct {
	name string
	rq   request
	want answer
}{
	{"handshake", handshakeRequest(), answer{code: 200, allowedOrigin: "*", body: []byte{}}},
	{"handshake without origin", request{http.MethodOptions, hubPath(testHub), http.Header{"Ce-Awpsversion": {"1.0"}}, nil},
		answer{code: 400, body: []byte{}}},
	{"json event", userEvent("echo", webpubsub.DataTypeJSON, []byte(`{"a":[1,2]}`), testKey),
		answer{code: 200, contentType: "application/json; charset=utf-8", body: []byte(`{"a":[1,2]}`)}},
	{"text event", userEvent("echo", webpubsub.DataTypeText, []byte("héllo"), testKey),
		answer{code: 200, contentType: "text/plain; charset=utf-8", body: []byte("héllo")}},
	{"binary event", userEvent("echo", webpubsub.DataTypeBinary, []byte{0, 1, 0xff}, testKey),
		answer{code: 200, contentType: "application/octet-stream", body: []byte{0, 1, 0xff}}},
	{"the key second of the two signatures", userEvent("echo", webpubsub.DataTypeText, []byte("x"), testSecondary, testKey),
		answer{code: 200, contentType: "text/plain; charset=utf-8", body: []byte("x")}},
	{"connect", systemEvent("connect", []byte(`{"claims":{}}`), testKey), answer{code: 200, body: []byte{}}},
	{"connected", systemEvent("connected", []byte(`{}`), testKey), answer{code: 200, body: []byte{}}},
	{"disconnected", systemEvent("disconnected", []byte(`{"reason":""}`), testKey), answer{code: 200, body: []byte{}}},
	{"bad signature", userEvent("echo", webpubsub.DataTypeText, []byte("x"), "not-the-key"),
		answer{code: 401, contentType: "text/plain; charset=utf-8", body: []byte(signatureRefused)}},
	{"no signature", userEvent("echo", webpubsub.DataTypeText, []byte("x")),
		answer{code: 401, contentType: "text/plain; charset=utf-8", body: []byte(signatureRefused)}},
	{"invalid json", userEvent("echo", webpubsub.DataTypeJSON, []byte(`{"a":`), testKey), answer{code: 400, body: []byte{}}},
}

func TestHandlerAnswers(t *testing.T) {
	_, base := serve(t, Options{})
	for _, tt := range handlerCases {
		t.Run(tt.name, func(t *testing.T) {
			got := send(t, base, tt.rq)
			if got.code != tt.want.code || got.allowedOrigin != tt.want.allowedOrigin ||
				got.contentType != tt.want.contentType || !bytes.Equal(got.body, tt.want.body) {
				t.Errorf("answer = %d %q %q %q, want %d %q %q %q", got.code, got.allowedOrigin, got.contentType, got.body,
					tt.want.code, tt.want.allowedOrigin, tt.want.contentType, tt.want.body)
			}
		})
	}
}

// notItsRequests are requests that are not a Web PubSub event for one of
// the handler's hubs, which are not its business: 404, as express answers
// them.
func notItsRequests() map[string]request {
	otherHub := userEvent("echo", webpubsub.DataTypeText, []byte("x"), testKey)
	otherHub.header.Set(webpubsub.HeaderHub, "elsewhere")
	noVersion := userEvent("echo", webpubsub.DataTypeText, []byte("x"), testKey)
	noVersion.header.Del(webpubsub.HeaderAWPSVersion)
	badType := userEvent("echo", webpubsub.DataTypeText, []byte("x"), testKey)
	badType.header.Set("Content-Type", "image/png")
	badEvent := systemEvent("reconnected", []byte(`{}`), testKey)
	unknownHub := userEvent("echo", webpubsub.DataTypeText, []byte("x"), testKey)
	unknownHub.path = hubPath("nohub")
	return map[string]request{
		"ce-hub names another hub":  otherHub,
		"no ce-awpsversion":         noVersion,
		"unsupported content type":  badType,
		"unknown system event":      badEvent,
		"hub without a target":      unknownHub,
		"handshake without version": {http.MethodOptions, hubPath(testHub), http.Header{webpubsub.HeaderRequestOrigin: {testOrigin}}, nil},
		"path without /events":      {http.MethodOptions, Prefix + testHub, webpubsub.ValidationHeader(testOrigin), nil},
	}
}

func TestHandlerNotItsRequest(t *testing.T) {
	_, base := serve(t, Options{})
	for name, rq := range notItsRequests() {
		if got := send(t, base, rq); got.code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", name, got.code)
		}
	}
}

// The handler takes the {event} a URL template may append, a hub name in
// another case, and the hubs of a reload.
func TestHandlerPathsAndReload(t *testing.T) {
	h, base := serve(t, Options{})
	rq := userEvent("echo", webpubsub.DataTypeText, []byte("x"), testKey)
	rq.path = Prefix + "PROBE" + eventsSegment + "/echo"
	if got := send(t, base, rq); got.code != http.StatusOK {
		t.Errorf("template with {event}, hub in capitals: status %d, want 200", got.code)
	}
	h.SetHubs(map[string][]string{"Probe": {"rotated"}})
	if got := send(t, base, userEvent("echo", webpubsub.DataTypeText, []byte("x"), testKey)); got.code != http.StatusUnauthorized {
		t.Errorf("old key after the reload: status %d, want 401", got.code)
	}
	if got := send(t, base, userEvent("echo", webpubsub.DataTypeText, []byte("x"), "rotated")); got.code != http.StatusOK {
		t.Errorf("new key after the reload: status %d, want 200", got.code)
	}
	h.SetHubs(nil)
	if got := send(t, base, handshakeRequest()); got.code != http.StatusNotFound {
		t.Errorf("handshake for a hub no longer served: status %d, want 404", got.code)
	}
}

func TestHandlerRefusesOtherMethodsAndLargeBodies(t *testing.T) {
	_, base := serve(t, Options{})
	if got := send(t, base, request{http.MethodGet, hubPath(testHub), nil, nil}); got.code != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", got.code)
	}
	big := userEvent("echo", webpubsub.DataTypeText, []byte(strings.Repeat("x", MaxBodySize+1)), testKey)
	if got := send(t, base, big); got.code != http.StatusRequestEntityTooLarge {
		t.Errorf("body over 1 MiB: status %d, want 413", got.code)
	}
}

// Delay holds back user events' answers, and only theirs.
func TestHandlerDelay(t *testing.T) {
	const delay = 150 * time.Millisecond
	_, base := serve(t, Options{Delay: delay})
	began := time.Now()
	if got := send(t, base, userEvent("echo", webpubsub.DataTypeText, []byte("x"), testKey)); got.code != http.StatusOK {
		t.Fatalf("status %d", got.code)
	}
	if took := time.Since(began); took < delay || took > delay+time.Second {
		t.Errorf("user event answered after %s, want %s", took, delay)
	}
	began = time.Now()
	send(t, base, handshakeRequest())
	if took := time.Since(began); took >= delay {
		t.Errorf("handshake answered after %s, want no delay", took)
	}
}

// answerLog is an Observer that keeps every answer.
type answerLog struct {
	mu      sync.Mutex
	answers map[string]int // "event code" → count
}

func (l *answerLog) EventAnswered(event string, code int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answers[fmt.Sprintf("%s %d", event, code)]++
}

// The Observer hears every answer, by the kind of request and its code.
func TestHandlerObserver(t *testing.T) {
	log := &answerLog{answers: map[string]int{}}
	_, base := serve(t, Options{Observer: log})
	for _, tt := range handlerCases {
		send(t, base, tt.rq)
	}
	for _, rq := range notItsRequests() {
		send(t, base, rq)
	}
	send(t, base, request{http.MethodGet, hubPath(testHub), nil, nil})
	want := map[string]int{
		"validate 200": 1, "validate 400": 1, "validate 404": 2,
		"user 200": 4, "user 401": 2, "user 400": 1, "user 404": 4,
		"connect 200": 1, "connected 200": 1, "disconnected 200": 1,
		"other 404": 1, "other 405": 1,
	}
	if !reflect.DeepEqual(log.answers, want) {
		t.Errorf("observed %v\nwant %v", log.answers, want)
	}
}
