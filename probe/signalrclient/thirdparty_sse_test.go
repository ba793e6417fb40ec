package signalrclient

// These tests run the server-sent events transport against
// github.com/philippseith/signalr, which serves WebSockets and SSE (it has
// no long polling).

import (
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/philippseith/signalr"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/internal/peerhub"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

func startThirdPartySSEHub(t *testing.T, opts ...func(signalr.Party) error) *thirdPartyHub {
	t.Helper()
	return startThirdPartyHub(t, append([]func(signalr.Party) error{signalr.HTTPTransports(signalr.TransportServerSentEvents)}, opts...)...)
}

func useSSE(o *Options) { o.Transport = TransportSSE }

// expectGreeting waits for the Welcome call OnConnected makes. This
// server names SSE connections by their connection token, not by the
// public connection id, so only the call's shape is checked.
func expectGreeting(t *testing.T, calls chan string) {
	t.Helper()
	select {
	case got := <-calls:
		if !strings.HasPrefix(got, `Welcome["`) || !strings.HasSuffix(got, `"]`) {
			t.Errorf("greeting %s", got)
		}
	case <-time.After(3 * time.Second):
		t.Error("no greeting")
	}
}

func TestThirdPartySSEInvocations(t *testing.T) {
	h := startThirdPartySSEHub(t)
	c, calls := dialThirdParty(t, h, useSSE)
	if c.Transport() != TransportSSE {
		t.Fatalf("transport %s", c.Transport())
	}
	ctx := testCtx(t, 5*time.Second)
	expectGreeting(t, calls)
	if r, err := c.Invoke(ctx, "Add", raw("2"), raw("40")); err != nil || string(r) != "42" {
		t.Errorf("Add: %s, %v", r, err)
	}
	if r, err := c.Invoke(ctx, "nothing"); err != nil || r != nil {
		t.Errorf("Nothing: %q, %v", r, err)
	}
	var ie *InvocationError
	if _, err := c.Invoke(ctx, "Explode"); !errors.As(err, &ie) || !strings.Contains(ie.Message, "exploded on purpose") {
		t.Errorf("Explode: %v", err)
	}
	if err := c.Send(ctx, "Notify", raw(`"ping"`)); err != nil {
		t.Fatal(err)
	}
	expectCall(t, calls, `Notified["PING"]`)
	if c.Err() != nil {
		t.Errorf("connection failed: %v", c.Err())
	}
}

func TestThirdPartySSEStreams(t *testing.T) {
	h := startThirdPartySSEHub(t)
	c, _ := dialThirdParty(t, h, useSSE)
	ctx := testCtx(t, 5*time.Second)
	s, err := c.Stream(ctx, "Count", []json.RawMessage{raw("5")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for item := range s.Items() {
		got = append(got, string(item))
	}
	if strings.Join(got, ",") != "0,1,2,3,4" || s.Err() != nil {
		t.Errorf("items %v, err %v", got, s.Err())
	}

	up := c.NewUpload()
	echo, err := c.Stream(ctx, "Echo", nil, up)
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range []string{`"a"`, `"b"`} {
		if err := up.Send(ctx, raw(item)); err != nil {
			t.Fatal(err)
		}
	}
	if err := up.Complete(ctx, ""); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for item := range echo.Items() {
		got = append(got, string(item))
	}
	if strings.Join(got, ",") != `"echo:a","echo:b"` || echo.Err() != nil {
		t.Errorf("echo items %v, err %v", got, echo.Err())
	}
}

// TestThirdPartySSEKeepAlive idles past the server's client timeout: the
// pings POSTed by the client keep the connection; without them the server
// ends it with a Close message over the event stream.
func TestThirdPartySSEKeepAlive(t *testing.T) {
	t.Parallel()
	h := startThirdPartySSEHub(t, signalr.TimeoutInterval(time.Second), signalr.KeepAliveInterval(200*time.Millisecond))
	alive, _ := dialThirdParty(t, h, func(o *Options) { useSSE(o); o.KeepAliveInterval = 100 * time.Millisecond })
	silent, _ := dialThirdParty(t, h, func(o *Options) { useSSE(o); o.KeepAliveInterval = time.Hour })
	localtest.WaitDone(t, silent, 5*time.Second)
	var ce *clientconn.CloseError
	if !errors.As(silent.Err(), &ce) || !strings.Contains(ce.Message, "timeout") {
		t.Errorf("silent connection ended with %v, want the server's timeout Close", silent.Err())
	}
	if r, err := alive.Invoke(testCtx(t, 5*time.Second), "Add", raw("1"), raw("1")); err != nil || string(r) != "2" {
		t.Errorf("after idling: %s, %v", r, err)
	}
}

func TestThirdPartySSECleanClose(t *testing.T) {
	h := startThirdPartySSEHub(t)
	baseline := runtime.NumGoroutine()
	c, calls := dialThirdParty(t, h, useSSE)
	expectGreeting(t, calls)
	if _, err := c.Invoke(testCtx(t, 5*time.Second), "Add", raw("1"), raw("2")); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(testCtx(t, 5*time.Second)); err != nil || c.Err() != nil {
		t.Fatalf("Close = %v, Err = %v", err, c.Err())
	}
	select {
	case <-h.disconnected:
	case <-time.After(3 * time.Second):
		t.Error("server never saw the disconnect")
	}
	localtest.CheckNoLeak(t, baseline)
}

// TestBenchHubOverSSE runs the benchmark hub contract (Echo answered by
// RecordLatency) over SSE.
func TestBenchHubOverSSE(t *testing.T) {
	srv, err := peerhub.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	latency := make(chan string, 1)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	c, err := Dial(testCtx(t, 5*time.Second), Options{URL: srv.URL, Transport: TransportSSE, Settings: clientconn.Settings{HTTPClient: client},
		Handlers: map[string]Handler{
			"RecordLatency": func(args []json.RawMessage) { latency <- string(args[0]) },
			"OnConnected":   func([]json.RawMessage) {},
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(testCtx(t, 2*time.Second))
	ctx := testCtx(t, 5*time.Second)
	if id, err := c.Invoke(ctx, "GetConnectionId"); err != nil || len(id) < 3 {
		t.Errorf("GetConnectionId: %s, %v", id, err)
	}
	if err := c.Send(ctx, "Echo", raw(`{"payload":"abc","information.SendTimestamp":7}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-latency:
		var p map[string]any
		if json.Unmarshal([]byte(got), &p) != nil || p["payload"] != "abc" || p["information.SendTimestamp"] != 7.0 {
			t.Errorf("RecordLatency(%s)", got)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no RecordLatency")
	}
}
