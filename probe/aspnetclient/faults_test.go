package aspnetclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/aspnetclient"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// Negotiate answers the client cannot use fail Dial in the negotiate
// phase, saying why.
func TestNegotiateFaults(t *testing.T) {
	cases := map[string]struct{ body, want string }{
		"bad JSON":         {`{"Url":"/signalr",`, "invalid negotiate answer"},
		"protocol version": {`{"Url":"/signalr","ConnectionToken":"t","ConnectionId":"i","ProtocolVersion":"1.2"}`, `unsupported protocol version "1.2"`},
		"core server":      {`{"connectionId":"x","availableTransports":[]}`, "an ASP.NET Core SignalR server"},
		"no token":         {`{"Url":"/signalr","ProtocolVersion":"2.1"}`, "lacks Url, ConnectionToken or ConnectionId"},
		"server error":     {`{"ProtocolVersion":"2.0","Error":"hub is full"}`, "the server refused: hub is full"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newMiniHub(t, func(h *miniHub) { h.negotiateBody = tc.body })
			_, err := dial(t, h, "webSockets", nil)
			var ce *clientconn.ConnectError
			if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseNegotiate || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Dial error = %v, want negotiate phase with %q", err, tc.want)
			}
		})
	}
}

// echoUntilEnd sends Echo until the connection ends or 3 s pass, and
// returns why it ended.
func echoUntilEnd(t *testing.T, c *aspnetclient.Conn) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		_ = c.Send(ctx, "Echo", json.RawMessage(`1`), json.RawMessage(`"p"`))
		select {
		case <-c.Done():
			return c.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("the connection did not end")
	return nil
}

// The server's disconnect message (D) ends the connection with a
// CloseError on every transport.
func TestDisconnectMessageEndsTheConnection(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newMiniHub(t, func(h *miniHub) { h.disconnectAfter = 2 })
			c, err := dial(t, h, transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = echoUntilEnd(t, c)
			var ce *clientconn.CloseError
			if !errors.As(err, &ce) || ce.Message != "the server disconnected the connection" {
				t.Fatalf("Err = %v, want the server's disconnect", err)
			}
		})
	}
}

// A transport that drops is reconnected with the cursor; a server that
// refuses the reconnect ends the connection with a ReconnectError.
func TestReconnect(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport+"/mended", func(t *testing.T) {
			h := newMiniHub(t, func(h *miniHub) { h.dropAfter = 2; h.disconnectAfter = 6 })
			var reconnected atomic.Int32
			c, err := dial(t, h, transport, func(o *aspnetclient.Options) { o.OnReconnected = func() { reconnected.Add(1) } })
			if err != nil {
				t.Fatal(err)
			}
			err = echoUntilEnd(t, c)
			var ce *clientconn.CloseError
			if !errors.As(err, &ce) || reconnected.Load() != 1 || h.reconns.Load() != 1 {
				t.Fatalf("Err = %v after %d reconnects (%d requests), want the disconnect after one", err, reconnected.Load(), h.reconns.Load())
			}
		})
		t.Run(transport+"/refused", func(t *testing.T) {
			h := newMiniHub(t, func(h *miniHub) { h.dropAfter = 2; h.refuseReconnect = true })
			c, err := dial(t, h, transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = echoUntilEnd(t, c)
			var re *aspnetclient.ReconnectError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "HTTP 403") {
				t.Fatalf("Err = %v, want a refused reconnect", err)
			}
		})
	}
}

// A Forever Frame or event stream that stalls before its init message
// fails Dial within the handshake timeout, as a timeout.
func TestStalledStreamFailsTheConnect(t *testing.T) {
	for _, transport := range []string{"foreverFrame", "serverSentEvents"} {
		t.Run(transport, func(t *testing.T) {
			h := newMiniHub(t, func(h *miniHub) { h.stallStream = true })
			start := time.Now()
			_, err := dial(t, h, transport, func(o *aspnetclient.Options) { o.HandshakeTimeout = 200 * time.Millisecond })
			var ce *clientconn.ConnectError
			if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTimeout || time.Since(start) > 2*time.Second {
				t.Fatalf("Dial error = %v after %s, want a timeout", err, time.Since(start))
			}
		})
	}
}
