package scenarios_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// reconnectDir holds the official clients pinned for the comparison.
const reconnectDir = "testdata/reconnect"

// reconnectPair is one wire's comparison: a hub fronted by two gates, one
// for hubprobe's held connection and one for the official client.
type reconnectPair struct {
	ep               scenarios.Endpoint // hubprobe's, through its gate
	js               string             // the official client's URL, through its gate
	down             time.Duration      // how long both gates stay shut
	heldGate, jsGate *localtest.Gate
	protocol         string
}

// A held connection reconnects on the schedule of its wire's official
// client: both are cut off from the same hub at the same instant, and
// their refused connect attempts, and the reconnect that gets through,
// come within 10 % of each other (or 150 ms, for those at once).
func TestHeldReconnectsAsTheOfficialClients(t *testing.T) {
	localtest.NodeModules(t, reconnectDir, "@microsoft/signalr", "@azure/web-pubsub-client")
	for name, pair := range map[string]func(t *testing.T) reconnectPair{"signalr": signalRPair, "webpubsub": webPubSubPair} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := pair(t)
			s := heldScenario(1, time.Minute)
			s.Protocol = p.protocol
			r := startHeld(t, p.ep, s)
			js := startJSReconnect(t, name, p.js)
			waitUntil(t, 10*time.Second, func() bool { return r.rec.Tally().Received >= 1 })
			shutAt := time.Now()
			p.heldGate.Shut()
			p.jsGate.Shut()
			time.Sleep(p.down)
			p.heldGate.Open()
			p.jsGate.Open()
			jsBack := js.reconnected(t)
			waitUntil(t, 10*time.Second, func() bool { return r.rec.Tally().Opened == 2 })
			heldBack := time.Since(shutAt) // within the wait's 50 ms
			t.Logf("hubprobe's failed connects: %v at %v", r.rec.Tally().Failed, sinceAll(shutAt, r.rec.Tally().FailedAt))
			compareAttempts(t, p.heldGate.Attempts(), p.jsGate.Attempts())
			if jsAfter := jsBack.Sub(shutAt); !near(heldBack, jsAfter) {
				t.Errorf("hubprobe was back %v after the drop, the official client %v", heldBack, jsAfter)
			}
		})
	}
}

func signalRPair(t *testing.T) reconnectPair {
	srv := hubtest.Start(t, hub.Options{})
	heldGate, heldURL := localtest.StartGate(t, srv.URL())
	jsGate, jsURL := localtest.StartGate(t, srv.URL())
	// @microsoft/signalr tries at once, then 2 and 10 s later: cut off
	// for 11 s, the third attempt, 12 s after the drop, gets through.
	return reconnectPair{ep: scenariostest.SignalR(heldURL), js: jsURL, down: 11 * time.Second,
		heldGate: heldGate, jsGate: jsGate, protocol: "json"}
}

func webPubSubPair(t *testing.T) reconnectPair {
	srv, _ := startWebPubSubServer(t, 0, hub.Options{})
	heldGate, heldOrigin := localtest.StartGate(t, srv.Origin())
	jsGate, jsOrigin := localtest.StartGate(t, srv.Origin())
	// @azure/web-pubsub-client tries at once, then every second: cut off
	// for 2.5 s, the attempt 3 s after the drop gets through.
	return reconnectPair{ep: scenariostest.WebPubSub(gatedConnectionString(t, heldOrigin), wpsHub),
		js: jsClientURL(t, gatedConnectionString(t, jsOrigin)), down: 2500 * time.Millisecond,
		heldGate: heldGate, jsGate: jsGate, protocol: webpubsub.ProtocolJSON}
}

// gatedConnectionString reaches the Web PubSub emulation at origin.
func gatedConnectionString(t *testing.T, origin string) azure.ConnectionString {
	t.Helper()
	cs, err := azure.ParseConnectionString("Endpoint=" + origin + ";AccessKey=" + matrixKey + ";Version=1.0;")
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// jsClientURL is the client access URL the official client connects with.
func jsClientURL(t *testing.T, cs azure.ConnectionString) string {
	t.Helper()
	url, err := cs.WebPubSubClientURL(wpsHub)
	if err != nil {
		t.Fatal(err)
	}
	token, err := azure.WebPubSubClientToken(cs, wpsHub, "js-peer", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return url + "?access_token=" + token
}

// jsReconnect is the official client's process, reading its report.
type jsReconnect struct{ lines chan string }

// startJSReconnect starts the official client of wire at url and waits
// until it is connected.
func startJSReconnect(t *testing.T, wire, url string) *jsReconnect {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	arg, _ := json.Marshal(map[string]string{"client": wire, "url": url})
	cmd := exec.CommandContext(ctx, "node", "reconnect.mjs", string(arg))
	cmd.Dir = reconnectDir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	js := &jsReconnect{lines: make(chan string, 4)}
	go func() {
		defer close(js.lines)
		for sc := bufio.NewScanner(out); sc.Scan(); {
			js.lines <- sc.Text()
		}
	}()
	js.await(t, "connected")
	return js
}

// await waits for the client's report of event and returns its time.
func (js *jsReconnect) await(t *testing.T, event string) time.Time {
	t.Helper()
	select {
	case line, ok := <-js.lines:
		what, ms, _ := strings.Cut(line, " ")
		n, err := strconv.ParseInt(ms, 10, 64)
		if !ok || what != event || err != nil {
			t.Fatalf("the official client said %q, want %s", line, event)
		}
		return time.UnixMilli(n)
	case <-time.After(30 * time.Second):
		t.Fatalf("the official client did not report %s", event)
	}
	return time.Time{}
}

func (js *jsReconnect) reconnected(t *testing.T) time.Time { return js.await(t, "reconnected") }

// compareAttempts checks that two clients' refused connect attempts come
// at the same times after the drop, one attempt being the connects that
// came within 300 ms of each other.
func compareAttempts(t *testing.T, held, js []time.Duration) {
	t.Helper()
	h, j := attemptsOf(held), attemptsOf(js)
	t.Logf("refused attempts after the drop: hubprobe %v, the official client %v", h, j)
	if len(h) != len(j) || len(h) == 0 {
		t.Fatalf("hubprobe tried at %v, the official client at %v", h, j)
	}
	for i := range h {
		if !near(h[i], j[i]) {
			t.Errorf("attempt %d: hubprobe after %v, the official client after %v (all: %v and %v)", i+1, h[i], j[i], h, j)
		}
	}
}

func attemptsOf(connects []time.Duration) []time.Duration {
	var out []time.Duration
	for _, c := range connects {
		if len(out) == 0 || c-out[len(out)-1] > 300*time.Millisecond {
			out = append(out, c)
		}
	}
	return out
}

// near is within 10 % of each other, or 150 ms.
func near(a, b time.Duration) bool {
	diff := a - b
	if diff < 0 {
		diff = -diff
	}
	return diff <= max(b/10, 150*time.Millisecond)
}

func sinceAll(t0 time.Time, at []time.Time) []time.Duration {
	out := make([]time.Duration, len(at))
	for i, t := range at {
		out[i] = t.Sub(t0)
	}
	return out
}
