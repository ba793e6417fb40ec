package scenarios_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/internal/peerhub"
	"github.com/hubprobe/hubprobe/internal/toxitest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// heldRig holds a scenario against the reference hub until stopped.
type heldRig struct {
	rec     *scenariostest.Recorder
	results *scenariostest.Results
	held    *scenarios.Held
	stop    sync.Once
}

func startHeld(t *testing.T, ep scenarios.Endpoint, s config.Scenario) *heldRig {
	t.Helper()
	r := &heldRig{rec: scenariostest.NewRecorder(), results: &scenariostest.Results{}}
	rn := &scenarios.Runner{Scenario: s, Endpoint: ep, Recorder: r.rec}
	var err error
	if r.held, err = rn.Hold(context.Background(), r.results.RunFinished); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// Stop ends the held connections; later calls do nothing.
func (r *heldRig) Stop() { r.stop.Do(r.held.Stop) }

// heldWires are the wires a held scenario runs on, each against the
// reference hub.
var heldWires = map[string]struct {
	start    func(t *testing.T, opts hub.Options) (*hub.Server, scenarios.Endpoint)
	protocol string
}{
	"core": {func(t *testing.T, opts hub.Options) (*hub.Server, scenarios.Endpoint) {
		srv := hubtest.Start(t, opts)
		return srv, scenariostest.SignalR(srv.URL())
	}, "json"},
	"classic": {func(t *testing.T, opts hub.Options) (*hub.Server, scenarios.Endpoint) {
		srv := hubtest.Start(t, opts)
		return srv, classicEndpoint(srv)
	}, "json"},
	"webpubsub": {func(t *testing.T, opts hub.Options) (*hub.Server, scenarios.Endpoint) {
		return startWebPubSubServer(t, 0, opts)
	}, webpubsub.ProtocolJSON},
}

// heldDrops are the reason each wire's held connections drop for, when
// the hub ends them by each drill; "" where the wire mends the drill
// itself (classic SignalR reconnects on the server's reconnect flag). A
// restart refuses every connect for 2 s: the reconnects that meet it fail
// and count as failed connects.
var heldDrops = map[string]map[hub.Drill]string{
	"core": {
		hub.DrillCloseError: clientconn.DropServerError, hub.DrillCloseReconnect: clientconn.DropServerReconnect,
		hub.DrillDisconnect: clientconn.DropServerClose, hub.DrillAbort: clientconn.DropTransport,
		hub.DrillRestart: clientconn.DropTransport,
	},
	"webpubsub": {
		hub.DrillCloseError: clientconn.DropServerError, hub.DrillCloseReconnect: clientconn.DropServerClose,
		hub.DrillDisconnect: clientconn.DropDisconnected, hub.DrillAbort: clientconn.DropTransport,
		hub.DrillRestart: clientconn.DropTransport,
	},
	"classic": {
		hub.DrillCloseError: clientconn.DropServerError, hub.DrillCloseReconnect: "",
		hub.DrillDisconnect: clientconn.DropDisconnected, hub.DrillAbort: clientconn.DropReconnectRefused,
		// Its own reconnect meets the restarting hub's 503.
		hub.DrillRestart: clientconn.DropHTTP5xx,
	},
}

// Every drill of the reference hub drops each held connection once, for
// its reason, and each comes back: dropped and reconnected exactly twice
// for two connections, every message either received or lost, nothing
// counted twice.
func TestHeldConnectionsDropForTheirReasonAndReconnect(t *testing.T) {
	for wireName, wire := range heldWires {
		for how, reason := range heldDrops[wireName] {
			t.Run(wireName+"/"+string(how), func(t *testing.T) {
				t.Parallel()
				srv, ep := wire.start(t, hub.Options{})
				s := heldScenario(2, time.Second)
				s.Protocol = wire.protocol
				r := startHeld(t, ep, s)
				waitUntil(t, 5*time.Second, func() bool { return r.rec.Tally().Received >= 4 })
				if n := srv.Drop(how, 0); n != 2 {
					t.Fatalf("the hub dropped %d connections, want 2", n)
				}
				waitUntil(t, 10*time.Second, func() bool { return r.rec.Tally().Reconnected >= 2 })
				time.Sleep(300 * time.Millisecond) // some sends on the new connections
				r.Stop()
				checkDropsAndReconnects(t, r, reason)
			})
		}
	}
}

// checkDropsAndReconnects checks a held run of two connections that the
// hub dropped once each, for reason ("" when the wire mended the drill).
func checkDropsAndReconnects(t *testing.T, r *heldRig, reason string) {
	t.Helper()
	tally := r.rec.Tally()
	wantDrops, wantOpened := map[string]int64{}, int64(4)
	if reason != "" {
		wantDrops[reason] = 2
	} else {
		wantOpened = 2 // mended in place: no new connects
	}
	if len(tally.Dropped) != len(wantDrops) || tally.Dropped[reason] != wantDrops[reason] ||
		tally.Reconnected != 2 || tally.Opened != wantOpened || tally.Active() != 0 {
		t.Errorf("dropped %v, reconnected %d, opened %d, open at the end %d; want %v, 2, %d, 0",
			tally.Dropped, tally.Reconnected, tally.Opened, tally.Active(), wantDrops, wantOpened)
	}
	var sent, received, lost, awayLost int64
	for _, res := range r.results.All() {
		sent, received, lost, awayLost = sent+res.Sent, received+res.Received, lost+res.Lost, awayLost+res.AwayLost
	}
	if received+lost != sent || lost-awayLost > 4 || received != tally.Received || tally.Duplicated != 0 {
		t.Errorf("sent %d, received %d (recorded %d), lost %d (%d while away), duplicated %d; want every one received or lost, "+
			"and beside those due while away at most 2 in flight each lost", sent, received, tally.Received, lost, awayLost, tally.Duplicated)
	}
}

// A held connection cut off for two seconds queues what falls due while
// it is away and sends it once it is back: each such message counts by
// identity as delivered late or lost (older than the loss timeout when
// the connection came back), never both, never neither.
func TestHeldMessagesSentWhileAwayAreLateOrLost(t *testing.T) {
	srv := hubtest.Start(t, hub.Options{})
	gate, url := localtest.StartGate(t, srv.URL())
	s := heldScenario(1, time.Minute)
	s.LossTimeout = time.Second
	r := startHeld(t, scenariostest.SignalR(url), s)
	waitUntil(t, 5*time.Second, func() bool { return r.rec.Tally().Received >= 3 })
	gate.Shut()
	time.Sleep(1500 * time.Millisecond)
	gate.Open() // the reconnect after 2 s gets through
	waitUntil(t, 5*time.Second, func() bool { return r.rec.Tally().Reconnected == 1 })
	time.Sleep(1200 * time.Millisecond) // what was flushed arrives, or turns a second old
	r.Stop()
	var res scenarios.Result
	for _, x := range r.results.All() {
		res.Sent, res.Received, res.Lost = res.Sent+x.Sent, res.Received+x.Received, res.Lost+x.Lost
		res.Away, res.AwayLate, res.AwayLost = res.Away+x.Away, res.AwayLate+x.AwayLate, res.AwayLost+x.AwayLost
	}
	t.Logf("sent %d, received %d, lost %d; away %d: %d late, %d lost", res.Sent, res.Received, res.Lost, res.Away, res.AwayLate, res.AwayLost)
	if res.Away < 15 || res.AwayLate < 1 || res.AwayLost < 1 || res.AwayLate+res.AwayLost != res.Away {
		t.Errorf("away %d: %d late, %d lost; want about 20, some late and some lost, adding up", res.Away, res.AwayLate, res.AwayLost)
	}
	if res.Received+res.Lost != res.Sent || res.Lost < res.AwayLost || res.Lost > res.AwayLost+1 {
		t.Errorf("sent %d, received %d, lost %d (%d of them while away); want each received or lost, and none lost but those away and one in flight",
			res.Sent, res.Received, res.Lost, res.AwayLost)
	}
}

// A third-party server (philippseith/signalr) that closes a held
// connection with an error: one drop for server_error, and the
// connection comes back.
func TestHeldConnectionClosedByAThirdPartyServer(t *testing.T) {
	srv := startThirdParty(t)
	srv.SetEchoPlan(func(n int64) peerhub.EchoFault {
		if n == 3 {
			return peerhub.EchoClose
		}
		return peerhub.EchoAnswer
	})
	r := startHeld(t, scenariostest.SignalR(srv.URL), heldScenario(1, time.Second))
	waitUntil(t, 10*time.Second, func() bool { return r.rec.Tally().Reconnected == 1 })
	r.Stop()
	checkOneDrop(t, r, clientconn.DropServerError)
}

// checkOneDrop checks a held run of one connection that dropped once, for
// reason, and came back.
func checkOneDrop(t *testing.T, r *heldRig, reason string) {
	t.Helper()
	tally := r.rec.Tally()
	if len(tally.Dropped) != 1 || tally.Dropped[reason] != 1 || tally.Reconnected != 1 || tally.Opened != 2 ||
		tally.Failed[scenarios.FailClosed] != 1 {
		t.Errorf("dropped %v, reconnected %d, opened %d, failed %v; want one drop for %s (a closed failure too), one reconnect, two connects",
			tally.Dropped, tally.Reconnected, tally.Opened, tally.Failed, reason)
	}
}

// A network that resets a held connection, or stops passing its bytes,
// drops it: for transport after a reset (toxiproxy's reset_peer), for
// keepalive when the path swallows everything (toxiproxy's timeout, which
// closes the proxy's side after 500 ms, or never) and the connection's
// ping goes unanswered. Once the path heals, the connection comes back.
func TestHeldConnectionsThroughNetworkFaults(t *testing.T) {
	for name, c := range map[string]struct {
		toxic toxitest.Toxic
		drop  string
		// lossTimeout sets how long a silence the connection bears before
		// it pings.
		lossTimeout time.Duration
	}{
		"reset_peer": {toxitest.Toxic{Type: "reset_peer", Stream: "downstream", Toxicity: 1,
			Attributes: map[string]any{"timeout": 0}}, clientconn.DropTransport, 300 * time.Millisecond},
		"timeout 500 ms": {toxitest.Toxic{Type: "timeout", Stream: "downstream", Toxicity: 1,
			Attributes: map[string]any{"timeout": 500}}, clientconn.DropKeepAlive, 300 * time.Millisecond},
		"timeout, black hole": {toxitest.Toxic{Type: "timeout", Stream: "downstream", Toxicity: 1,
			Attributes: map[string]any{"timeout": 0}}, clientconn.DropKeepAlive, 300 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := hubtest.Start(t, hub.Options{})
			proxy, url := toxitest.Start(t, srv.URL())
			s := heldScenario(1, 10*time.Second)
			s.LossTimeout = c.lossTimeout
			r := startHeld(t, scenariostest.SignalR(url), s)
			waitUntil(t, 5*time.Second, func() bool { return r.rec.Tally().Received >= 3 })
			toxitest.Add(t, proxy, c.toxic)
			waitUntil(t, 10*time.Second, func() bool { return len(r.rec.Tally().Dropped) > 0 })
			toxitest.Remove(t, proxy, c.toxic)
			waitUntil(t, 10*time.Second, func() bool { return r.rec.Tally().Reconnected == 1 })
			r.Stop()
			checkOneDrop(t, r, c.drop)
		})
	}
}

// Past the hub's message rate limit the held connections are closed for
// the message quota: they drop as throttled, the target pauses, and the
// sends that fall due meanwhile are counted as throttled, never sent.
func TestHeldConnectionsHonourTheThrottlePause(t *testing.T) {
	srv := hubtest.Start(t, hub.Options{MessageRateLimit: 5})
	r := startHeld(t, scenariostest.SignalR(srv.URL()), heldScenario(2, time.Second))
	waitUntil(t, 10*time.Second, func() bool { return r.rec.Tally().Dropped[clientconn.DropThrottled] >= 1 })
	time.Sleep(500 * time.Millisecond)
	r.Stop()
	tally := r.rec.Tally()
	var paused int64
	for _, res := range r.results.All() {
		paused += res.Paused
	}
	if tally.Throttled[throttle.MessageLimit] < 1 || paused < 1 {
		t.Errorf("throttled %v, paused %d sends; want the message limit counted and sends held while paused", tally.Throttled, paused)
	}
}
