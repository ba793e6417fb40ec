package signalrclient_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/clientconn/clientconntest"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
)

// linkDelay is what the link to the distant hub adds to every byte from
// it: each phase that waits for the hub waits that long at least, and so
// does each round trip. A new connection's TLS handshake waits for it too,
// which keeps it apart from a round trip's own.
const linkDelay = 50 * time.Millisecond

// outsideClock bounds what Dial does around its phase clock (reading the
// options, starting the read goroutine).
const outsideClock = 20 * time.Millisecond

// connectCase is one way to connect: a transport, straight to the hub or
// through an app server's negotiate redirect to Azure SignalR Service.
type connectCase struct {
	transport string
	redirect  bool
}

func connectCases() map[string]connectCase {
	return map[string]connectCase{
		"websockets":                   {signalrclient.TransportWebSockets, false},
		"sse":                          {signalrclient.TransportSSE, false},
		"longpolling":                  {signalrclient.TransportLongPolling, false},
		"websockets through redirect":  {signalrclient.TransportWebSockets, true},
		"sse through redirect":         {signalrclient.TransportSSE, true},
		"longpolling through redirect": {signalrclient.TransportLongPolling, true},
	}
}

// dialDistant connects to a distant hub over TLS the case's way, with obs
// observing, and returns how long Dial took.
func dialDistant(t *testing.T, c connectCase, obs *clientconntest.Timings, roundTrips time.Duration) time.Duration {
	t.Helper()
	opts := hub.Options{}
	if c.redirect {
		opts.AccessKey, opts.RedirectNegotiate = "phase-test-key-0123456789abcdef", true
	}
	url, client := hubtest.StartDistant(t, opts, linkDelay)
	began := time.Now()
	conn, err := signalrclient.Dial(localtest.Ctx(t, 20*time.Second), signalrclient.Options{URL: url + hub.DefaultPath, Transport: c.transport,
		Settings: clientconn.Settings{HTTPClient: client, Observer: obs, RoundTripInterval: roundTrips}})
	whole := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(localtest.Ctx(t, 5*time.Second)) })
	return whole
}

// On every transport, straight or through an Azure-style negotiate
// redirect, each phase that waits for the hub gets its wait, no phase is
// counted twice, and the phases add up to the whole connect.
func TestConnectPhasesAddUpToTheConnect(t *testing.T) {
	for name, c := range connectCases() {
		t.Run(name, func(t *testing.T) {
			obs := &clientconntest.Timings{}
			whole := dialDistant(t, c, obs, time.Hour)
			connects, _ := obs.Measured()
			if len(connects) != 1 {
				t.Fatalf("%d connects reported, want 1", len(connects))
			}
			timing := connects[0]
			clientconntest.CheckSum(t, timing, whole, outsideClock)
			waited := []string{clientconn.PhaseTLS, clientconn.PhaseNegotiate, clientconn.PhaseUpgrade, clientconn.PhaseHandshake}
			if c.redirect {
				waited = append(waited, clientconn.PhaseRedirect)
			} else if d := timing.Of(clientconn.PhaseRedirect); d != 0 {
				t.Errorf("redirect took %v without a redirect", d)
			}
			for _, phase := range waited {
				if d := timing.Of(phase); d < linkDelay {
					t.Errorf("%s took %v, less than the link's %v", phase, d, linkDelay)
				}
			}
			if d := timing.Of(clientconn.PhaseDNS); d != 0 {
				t.Errorf("dns took %v for an IP address", d)
			}
		})
	}
}

// Every transport measures its round trip at once and then every
// interval, and the measure is the link's delay: no new connection's
// handshake in it, no hub code either.
func TestRoundTripOnEveryTransport(t *testing.T) {
	for name, c := range connectCases() {
		if c.redirect {
			continue
		}
		t.Run(name, func(t *testing.T) {
			obs := &clientconntest.Timings{}
			dialDistant(t, c, obs, 150*time.Millisecond)
			clientconntest.CheckRoundTrips(t, obs.WaitRoundTrips(t, 3, 5*time.Second), linkDelay)
		})
	}
}

// A message sent the moment Dial returns has its connection's round trip
// known before its echo comes back: the first measuring ping goes out
// during Dial, ahead of anything the caller writes, so a delivery's hub
// time never lacks the network's share. Every connection checks its own
// first message.
func TestFirstMessageFindsTheRoundTripMeasured(t *testing.T) {
	url, client := hubtest.StartDistant(t, hub.Options{}, linkDelay)
	payload := json.RawMessage(`{"information.ConnectionId":"x","payload.MessageBlob":"AAAA"}`)
	for i := range 8 {
		obs := &clientconntest.Timings{}
		echoed := make(chan int, 1)
		conn, err := signalrclient.Dial(localtest.Ctx(t, 20*time.Second), signalrclient.Options{URL: url + hub.DefaultPath,
			Settings: clientconn.Settings{HTTPClient: client, Observer: obs},
			Handlers: map[string]signalrclient.Handler{"RecordLatency": func([]json.RawMessage) {
				_, rtts := obs.Measured()
				echoed <- len(rtts)
			}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Send(localtest.Ctx(t, 5*time.Second), "Echo", payload); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-echoed:
			if n == 0 {
				t.Errorf("connection %d: its first echo came back before any round trip was measured", i)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("connection %d: no echo in 5 s", i)
		}
		_ = conn.Close(localtest.Ctx(t, 5*time.Second))
	}
}
