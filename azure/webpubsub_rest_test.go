package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// webPubSubClient returns a Web PubSub REST client for the emulator, which
// then checks tokens against the full request URL.
func (e *restEmulator) webPubSubClient(t *testing.T, opts RESTOptions) *WebPubSubRESTClient {
	t.Helper()
	e.mu.Lock()
	e.fullURLAudience = true
	if opts.Now != nil {
		e.now = opts.Now
	}
	e.mu.Unlock()
	cs := mustParseCS(t, "Endpoint="+e.endpoint+";AccessKey="+azureTestKey+";Version=1.0;")
	c, err := NewWebPubSubRESTClient(cs, "Chat", opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWebPubSubRESTPathsBodiesAndTokens(t *testing.T) {
	emu := newRESTEmulator(t, restResponse{status: 202})
	c := emu.webPubSubClient(t, RESTOptions{})
	ctx := localtest.Ctx(t, 5*time.Second)
	calls := []func() error{
		func() error { return c.SendToAll(ctx, webpubsub.DataTypeJSON, []byte(`{"n":1}`), "c1", "c 2") },
		func() error { return c.SendToUser(ctx, "user/1", webpubsub.DataTypeText, []byte("héllo")) },
		func() error { return c.SendToGroup(ctx, "g 1", webpubsub.DataTypeBinary, []byte{0, 1, 2}) },
		func() error { return c.SendToConnection(ctx, "conn-1", webpubsub.DataTypeText, nil) },
		func() error { return c.AddConnectionToGroup(ctx, "g1", "conn-1") },
		func() error { return c.CloseConnection(ctx, "conn-1", "bye now") },
	}
	for i, call := range calls {
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	want := []string{
		`POST /api/hubs/Chat/:send api-version=2024-12-01&excluded=c1&excluded=c+2 application/json {"n":1}`,
		`POST /api/hubs/Chat/users/user%2F1/:send api-version=2024-12-01 text/plain héllo`,
		"POST /api/hubs/Chat/groups/g%201/:send api-version=2024-12-01 application/octet-stream \x00\x01\x02",
		`POST /api/hubs/Chat/connections/conn-1/:send api-version=2024-12-01 text/plain `,
		`PUT /api/hubs/Chat/groups/g1/connections/conn-1 api-version=2024-12-01  `,
		`DELETE /api/hubs/Chat/connections/conn-1 api-version=2024-12-01&reason=bye+now  `,
	}
	reqs := emu.seen()
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(reqs), len(want))
	}
	for i, r := range reqs {
		if got := r.method + " " + r.path + " " + r.query + " " + r.contentType + " " + r.body; got != want[i] {
			t.Errorf("request %d:\n got %q\nwant %q", i, got, want[i])
		}
		if r.tokenErr != nil {
			t.Errorf("request %d: token refused for aud = the full request URL: %v", i, r.tokenErr)
		}
		if !r.claims.NotBefore.IsZero() || r.claims.Subject != "" || len(r.claims.Roles) != 0 {
			t.Errorf("request %d: claims %+v, want only aud, exp and iat", i, r.claims)
		}
	}
}

func TestWebPubSubRESTHonoursPortAndRetryAfter(t *testing.T) {
	throttled := restResponse{status: 429, header: map[string]string{"Retry-After": "2"}, body: throttle.MessageLimitText}
	emu := newRESTEmulator(t, throttled, restResponse{status: 202})
	clock := newFakeRESTTime()
	opts := clock.options(1)
	obs := &recordingObserver{}
	opts.Observer = obs
	emu.webPubSubClient(t, opts) // the emulator now checks full-URL tokens on the fake clock
	// The Endpoint names another port; Port= points the client at the
	// emulator, and the token's aud follows the request.
	host, port, _ := strings.Cut(strings.TrimPrefix(emu.endpoint, "http://"), ":")
	cs := mustParseCS(t, "Endpoint=http://"+host+":1;Port="+port+";AccessKey="+azureTestKey)
	c, err := NewWebPubSubRESTClient(cs, "Chat", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SendToGroup(localtest.Ctx(t, 5*time.Second), "g", webpubsub.DataTypeText, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(clock.waits()); got != "[2s]" {
		t.Errorf("waits %s, want [2s]", got)
	}
	if got := strings.Join(obs.responses(), ","); got != "rest 429,rest 202" {
		t.Errorf("observer saw %s", got)
	}
	reqs := emu.seen()
	if len(reqs) != 2 || reqs[0].token == reqs[1].token || reqs[0].tokenErr != nil || reqs[1].tokenErr != nil {
		t.Errorf("%d requests; each needs its own valid token", len(reqs))
	}
}

func TestWebPubSubREST429ClassifiedAndSecretsStayOut(t *testing.T) {
	emu := newRESTEmulator(t, restResponse{status: 429, body: throttle.ConnectionLimitText})
	opts := newFakeRESTTime().options(0)
	opts.MaxRetries = -1
	err := emu.webPubSubClient(t, opts).SendToAll(localtest.Ctx(t, 5*time.Second), webpubsub.DataTypeText, []byte("x"))
	var re *RESTError
	if !errors.As(err, &re) || re.StatusCode != 429 || re.Op != "send to all" || re.Attempts != 1 {
		t.Fatalf("err = %v, want a 429 RESTError for send to all after 1 attempt", err)
	}
	if reason, ok := ClassifyRESTThrottle(err); !ok || reason != throttle.ConnectionLimit {
		t.Errorf("ClassifyRESTThrottle = %q, %v", reason, ok)
	}
	reqs := emu.seen()
	if msg := err.Error(); strings.Contains(msg, azureTestKey) || strings.Contains(msg, reqs[0].token) {
		t.Errorf("error %q carries a secret", msg)
	}
}

func TestWebPubSubRESTValidatesBeforeSending(t *testing.T) {
	emu := newRESTEmulator(t, restResponse{status: 202})
	c := emu.webPubSubClient(t, RESTOptions{})
	ctx := context.Background()
	bad := map[string]error{
		"invalid JSON":       c.SendToAll(ctx, webpubsub.DataTypeJSON, []byte(`{"a":`)),
		"empty JSON":         c.SendToAll(ctx, webpubsub.DataTypeJSON, nil),
		"unknown data type":  c.SendToAll(ctx, webpubsub.DataType(9), []byte("x")),
		"too big":            c.SendToAll(ctx, webpubsub.DataTypeBinary, make([]byte, restMaxBody+1)),
		"empty user":         c.SendToUser(ctx, "", webpubsub.DataTypeText, []byte("x")),
		"empty group":        c.SendToGroup(ctx, "", webpubsub.DataTypeText, []byte("x")),
		"long group":         c.SendToGroup(ctx, strings.Repeat("g", 1025), webpubsub.DataTypeText, []byte("x")),
		"empty connection":   c.SendToConnection(ctx, "", webpubsub.DataTypeText, []byte("x")),
		"add, no connection": c.AddConnectionToGroup(ctx, "g", ""),
		"close, none":        c.CloseConnection(ctx, "", ""),
	}
	for name, err := range bad {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if n := len(emu.seen()); n != 0 {
		t.Errorf("%d requests sent for invalid calls", n)
	}
	cs := mustParseCS(t, "Endpoint=https://x.webpubsub.azure.com;AccessKey="+azureTestKey)
	for _, v := range []string{"v1", "2024-13-01", "2024-12-01x", "latest"} {
		if _, err := NewWebPubSubRESTClient(cs, "Chat", RESTOptions{APIVersion: v}); err == nil {
			t.Errorf("api-version %q accepted", v)
		}
	}
	for _, v := range []string{"2024-01-01", "2021-08-01-preview"} {
		if _, err := NewWebPubSubRESTClient(cs, "Chat", RESTOptions{APIVersion: v}); err != nil {
			t.Errorf("api-version %q refused: %v", v, err)
		}
	}
	if _, err := NewWebPubSubRESTClient(cs, "9chat", RESTOptions{}); err == nil {
		t.Error("hub 9chat accepted")
	}
}

func TestWebPubSubRESTUnexpectedStatusIsNotRetried(t *testing.T) {
	emu := newRESTEmulator(t, restResponse{status: http.StatusNotFound, body: "no such connection"})
	err := emu.webPubSubClient(t, RESTOptions{}).CloseConnection(localtest.Ctx(t, 5*time.Second), "gone", "")
	var re *RESTError
	if !errors.As(err, &re) || re.StatusCode != 404 || re.Body != "no such connection" || re.Attempts != 1 {
		t.Fatalf("err = %v", err)
	}
	if len(emu.seen()) != 1 {
		t.Errorf("%d requests, want 1", len(emu.seen()))
	}
}
