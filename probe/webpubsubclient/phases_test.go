package webpubsubclient_test

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/clientconn/clientconntest"
	"github.com/hubprobe/hubprobe/probe/webpubsubclient"
)

// linkDelay is what the link to the distant service adds to every byte
// from it: the upgrade, its TLS handshake and each round trip wait that
// long at least.
const linkDelay = 50 * time.Millisecond

// dialDistantService connects to the reference hub's Web PubSub emulation,
// served over TLS behind a link that delays the service's bytes, and
// returns how long Dial took.
func dialDistantService(t *testing.T, obs *clientconntest.Timings, roundTrips time.Duration) time.Duration {
	t.Helper()
	const key = "phase-test-key-0123456789abcdef"
	url, httpClient := hubtest.StartDistant(t, hub.Options{AccessKey: key}, linkDelay)
	clientURL, token := hubtest.WebPubSubClient(t, url, key, "chat", "u1")
	began := time.Now()
	c, err := webpubsubclient.Dial(localtest.Ctx(t, 20*time.Second), webpubsubclient.Options{URL: clientURL, AccessToken: token,
		Settings: clientconn.Settings{HTTPClient: httpClient, Observer: obs, RoundTripInterval: roundTrips}})
	whole := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(localtest.Ctx(t, 5*time.Second)) })
	return whole
}

// The upgrade (its own wait, then TLS's) and the wait for connected each
// get their time, and the phases add up to the whole connect. The service
// sends connected right behind its 101, so that wait is short but there.
func TestConnectPhasesAddUpToTheConnect(t *testing.T) {
	obs := &clientconntest.Timings{}
	whole := dialDistantService(t, obs, time.Hour)
	connects, _ := obs.Measured()
	if len(connects) != 1 {
		t.Fatalf("%d connects reported, want 1", len(connects))
	}
	timing := connects[0]
	clientconntest.CheckSum(t, timing, whole, 20*time.Millisecond)
	for _, phase := range []string{clientconn.PhaseTLS, clientconn.PhaseUpgrade} {
		if d := timing.Of(phase); d < linkDelay {
			t.Errorf("%s took %v, less than the link's %v", phase, d, linkDelay)
		}
	}
	if d := timing.Of(clientconn.PhaseHandshake); d <= 0 {
		t.Errorf("handshake took %v", d)
	}
	for _, phase := range []string{clientconn.PhaseDNS, clientconn.PhaseNegotiate, clientconn.PhaseRedirect} {
		if d := timing.Of(phase); d != 0 {
			t.Errorf("%s took %v; a Web PubSub client has none", phase, d)
		}
	}
}

// The round trip is a ping to its pong, measured at once and every
// interval: the link's delay, nothing of the service's hub logic.
func TestRoundTripIsPingToPong(t *testing.T) {
	obs := &clientconntest.Timings{}
	dialDistantService(t, obs, 150*time.Millisecond)
	clientconntest.CheckRoundTrips(t, obs.WaitRoundTrips(t, 3, 5*time.Second), linkDelay)
}
