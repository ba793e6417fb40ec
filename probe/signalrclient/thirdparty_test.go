package signalrclient

// These tests run the client against github.com/philippseith/signalr, a
// SignalR server implementation written independently of hubprobe.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/philippseith/signalr"
)

type quietLogger struct{}

func (quietLogger) Log(...any) error { return nil }

// probeHub is the hub the third-party server runs for these tests.
type probeHub struct {
	signalr.Hub
	disconnected chan string
}

func (h *probeHub) OnConnected(connectionID string) {
	h.Clients().Caller().Send("Welcome", connectionID)
}

func (h *probeHub) OnDisconnected(connectionID string) {
	select {
	case h.disconnected <- connectionID:
	default:
	}
}

func (h *probeHub) Add(a, b int) int { return a + b }
func (h *probeHub) Nothing()         {}
func (h *probeHub) Explode() int     { panic("exploded on purpose") }

func (h *probeHub) Notify(text string) {
	h.Clients().Caller().Send("Notified", strings.ToUpper(text))
}

// Count streams 0..n-1.
func (h *probeHub) Count(n int) <-chan int {
	out := make(chan int)
	go func() {
		defer close(out)
		for i := range n {
			out <- i
		}
	}()
	return out
}

// Echo streams every uploaded item back, the shape of the benchmark's
// StreamingEcho.
func (h *probeHub) Echo(in <-chan string) <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		for s := range in {
			out <- "echo:" + s
		}
	}()
	return out
}

type thirdPartyHub struct {
	url          string
	disconnected chan string
}

// startThirdPartyHub serves probeHub at /chat on 127.0.0.1.
func startThirdPartyHub(t *testing.T, opts ...func(signalr.Party) error) *thirdPartyHub {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	disconnected := make(chan string, 8)
	hub := &probeHub{disconnected: disconnected}
	opts = append([]func(signalr.Party) error{
		signalr.UseHub(hub),
		signalr.Logger(quietLogger{}, false),
		signalr.HTTPTransports(signalr.TransportWebSockets),
	}, opts...)
	server, err := signalr.NewServer(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	server.MapHTTP(signalr.WithHTTPServeMux(mux), "/chat")
	srv := newLocalServer(t, mux)
	return &thirdPartyHub{url: srv.URL + "/chat", disconnected: disconnected}
}

// dialThirdParty connects with handlers for the hub's client methods.
func dialThirdParty(t *testing.T, h *thirdPartyHub, mod func(*Options)) (*Conn, chan string) {
	t.Helper()
	calls := make(chan string, 16)
	record := func(name string) Handler {
		return func(args []json.RawMessage) {
			calls <- fmt.Sprintf("%s%s", name, args)
		}
	}
	o := Options{
		URL: h.url,
		// No pooled keep-alive connections, so goroutine counts settle.
		Settings: clientconn.Settings{HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}},
		Handlers: map[string]Handler{"welcome": record("Welcome"), "Notified": record("Notified")},
	}
	if mod != nil {
		mod(&o)
	}
	c, err := Dial(testCtx(t, 5*time.Second), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// This server never answers the close frame; don't wait the full
		// second for it.
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		c.Close(ctx)
	})
	return c, calls
}

func expectCall(t *testing.T, calls chan string, want string) {
	t.Helper()
	select {
	case got := <-calls:
		if got != want {
			t.Errorf("handler call %s, want %s", got, want)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("no handler call %s", want)
	}
}

func TestThirdPartyInvocations(t *testing.T) {
	h := startThirdPartyHub(t)
	c, calls := dialThirdParty(t, h, nil)
	ctx := testCtx(t, 5*time.Second)

	// The greeting sent from OnConnected reaches the handler installed
	// before the handshake (matched case-insensitively).
	expectCall(t, calls, fmt.Sprintf("Welcome[%q]", c.ConnectionID()))

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
	if _, err := c.Invoke(ctx, "Missing"); !errors.As(err, &ie) || !strings.Contains(ie.Message, "Unknown method") {
		t.Errorf("Missing: %v", err)
	}
	if err := c.Send(ctx, "Notify", raw(`"ping"`)); err != nil {
		t.Fatal(err)
	}
	expectCall(t, calls, `Notified["PING"]`)
	if c.Err() != nil {
		t.Errorf("connection failed: %v", c.Err())
	}
}

func TestThirdPartyServerStream(t *testing.T) {
	h := startThirdPartyHub(t)
	c, _ := dialThirdParty(t, h, nil)
	s, err := c.Stream(testCtx(t, 5*time.Second), "Count", []json.RawMessage{raw("5")})
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
}

func TestThirdPartyUploadEcho(t *testing.T) {
	h := startThirdPartyHub(t)
	c, _ := dialThirdParty(t, h, nil)
	ctx := testCtx(t, 5*time.Second)
	up := c.NewUpload()
	s, err := c.Stream(ctx, "Echo", nil, up)
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range []string{`"a"`, `"b"`, `"c"`} {
		if err := up.Send(ctx, raw(item)); err != nil {
			t.Fatal(err)
		}
	}
	if err := up.Complete(ctx, ""); err != nil {
		t.Fatal(err)
	}
	var got []string
	for item := range s.Items() {
		got = append(got, string(item))
	}
	if strings.Join(got, ",") != `"echo:a","echo:b","echo:c"` || s.Err() != nil {
		t.Errorf("items %v, err %v", got, s.Err())
	}
}

// TestThirdPartyKeepAlive idles past the server's client timeout: only the
// client's pings keep the connection. Without them (the control case) the
// server closes it with an error.
func TestThirdPartyKeepAlive(t *testing.T) {
	t.Parallel() // slow by design; runs after the goroutine-counting tests
	h := startThirdPartyHub(t, signalr.TimeoutInterval(time.Second), signalr.KeepAliveInterval(200*time.Millisecond))
	alive, _ := dialThirdParty(t, h, func(o *Options) { o.KeepAliveInterval = 100 * time.Millisecond })
	silent, _ := dialThirdParty(t, h, func(o *Options) { o.KeepAliveInterval = time.Hour })

	localtest.WaitDone(t, silent, 5*time.Second)
	var ce *clientconn.CloseError
	if !errors.As(silent.Err(), &ce) || !strings.Contains(ce.Message, "timeout") {
		t.Errorf("silent connection ended with %v, want the server's timeout Close", silent.Err())
	}
	if r, err := alive.Invoke(testCtx(t, 5*time.Second), "Add", raw("1"), raw("1")); err != nil || string(r) != "2" {
		t.Errorf("after idling: %s, %v", r, err)
	}
	if alive.Err() != nil {
		t.Errorf("pinging connection failed: %v", alive.Err())
	}
}

func TestThirdPartyCompression(t *testing.T) {
	h := startThirdPartyHub(t)
	c, _ := dialThirdParty(t, h, func(o *Options) { o.EnableCompression = true })
	big := `"` + strings.Repeat("z", 8000) + `"`
	s, err := c.Stream(testCtx(t, 5*time.Second), "Count", []json.RawMessage{raw("3")})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range s.Items() {
		n++
	}
	if n != 3 || s.Err() != nil {
		t.Errorf("%d items, err %v", n, s.Err())
	}
	if err := c.Send(testCtx(t, 5*time.Second), "Notify", raw(big)); err != nil {
		t.Fatal(err)
	}
}

func TestThirdPartyCleanCloseLeavesNothingRunning(t *testing.T) {
	h := startThirdPartyHub(t)
	baseline := runtime.NumGoroutine()
	c, calls := dialThirdParty(t, h, nil)
	expectCall(t, calls, fmt.Sprintf("Welcome[%q]", c.ConnectionID()))
	if _, err := c.Invoke(testCtx(t, 5*time.Second), "Add", raw("1"), raw("2")); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(testCtx(t, 5*time.Second)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if c.Err() != nil {
		t.Errorf("Err() after Close = %v", c.Err())
	}
	select {
	case id := <-h.disconnected:
		if id != c.ConnectionID() {
			t.Errorf("server disconnected %q, want %q", id, c.ConnectionID())
		}
	case <-time.After(3 * time.Second):
		t.Error("server never saw the disconnect")
	}
	localtest.CheckNoLeak(t, baseline)
}
