package aspnetclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/aspnetclient"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

var transports = []string{"webSockets", "serverSentEvents", "longPolling", "foreverFrame"}

func dial(t *testing.T, h *miniHub, transport string, configure func(*aspnetclient.Options)) (*aspnetclient.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	o := aspnetclient.Options{URL: h.url(), Hub: "Signalrbench", Transport: transport,
		Settings: clientconn.Settings{HandshakeTimeout: 2 * time.Second}}
	if configure != nil {
		configure(&o)
	}
	c, err := aspnetclient.Dial(ctx, o)
	if err == nil {
		t.Cleanup(func() { _ = c.Close(context.Background()) })
	}
	return c, err
}

// On every transport: a result, an error, a hub-to-client call, and an
// abort on Close.
func TestInvokeSendAndCloseOnEveryTransport(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newMiniHub(t, nil)
			measured := make(chan []json.RawMessage, 1)
			c, err := dial(t, h, transport, func(o *aspnetclient.Options) {
				o.Handlers = map[string]aspnetclient.Handler{"measure": func(a []json.RawMessage) { measured <- keepArgs(a) }}
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if got, err := c.Invoke(ctx, "JoinGroup", json.RawMessage(`"g"`)); err != nil || string(got) != `"JoinGroup"` {
				t.Fatalf("Invoke = %s, %v", got, err)
			}
			var ie *aspnetclient.InvocationError
			if _, err := c.Invoke(ctx, "Fail"); !errors.As(err, &ie) || ie.Message != "no such method" {
				t.Fatalf("Invoke(Fail) error = %v", err)
			}
			if err := c.Send(ctx, "Echo", json.RawMessage(`7`), json.RawMessage(`"p"`)); err != nil {
				t.Fatal(err)
			}
			select {
			case args := <-measured:
				if len(args) != 2 || string(args[0]) != "7" || string(args[1]) != `"p"` {
					t.Fatalf("Measure args %s", args)
				}
			case <-ctx.Done():
				t.Fatal("no Measure")
			}
			if c.ConnectionID() != "id-1" || c.Transport() == "" {
				t.Errorf("id %q transport %q", c.ConnectionID(), c.Transport())
			}
			if err := c.Close(ctx); err != nil || c.Err() != nil {
				t.Fatalf("Close = %v, Err = %v", err, c.Err())
			}
			if n := h.aborts.Load(); n != 1 {
				t.Errorf("%d abort requests, want 1", n)
			}
		})
	}
}

// roundTrips counts the round trips a connection measures.
type roundTrips struct {
	clientconn.NopObserver
	n atomic.Int32
}

func (r *roundTrips) RoundTrip(time.Duration) { r.n.Add(1) }

// The round trip is measured at once: a WebSocket ping to its pong, or
// the ping request on the HTTP transports.
func TestRoundTripIsMeasuredAtOnce(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newMiniHub(t, nil)
			obs := &roundTrips{}
			if _, err := dial(t, h, transport, func(o *aspnetclient.Options) { o.Observer = obs }); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(3 * time.Second)
			for obs.n.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			pings := h.pings.Load()
			if obs.n.Load() != 1 || (transport == "webSockets") != (pings == 0) {
				t.Fatalf("%d round trips, %d ping requests", obs.n.Load(), pings)
			}
		})
	}
}

// keepArgs copies a handler's arguments, which alias the read buffer.
func keepArgs(args []json.RawMessage) []json.RawMessage {
	kept := make([]json.RawMessage, len(args))
	for i, a := range args {
		kept[i] = append(json.RawMessage(nil), a...)
	}
	return kept
}
