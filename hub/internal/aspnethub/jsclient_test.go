package aspnethub

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/internal/localtest"
)

const jsClientDir = "testdata/jsclient"

// jsRun is one pass of a client over the hub's methods (client.mjs).
type jsRun struct {
	Name      string           `json:"name"`
	Client    string           `json:"client"` // "jquery" (the official client) or "node-signalr"
	URL       string           `json:"url"`
	Transport aspnet.Transport `json:"transport"`
	Tokens    bool             `json:"tokens"`
	Capture   bool             `json:"capture"`
}

// jsResult is the script's report of a run.
type jsResult struct {
	wiretest.JSResult
	Expected   []string `json:"expected"`
	Redirected struct {
		URL         string `json:"url"`
		AccessToken bool   `json:"accessToken"`
	} `json:"redirected"`
	Capture *jsCapture `json:"capture"`
}

// jsCapture is what the first connection of a run sent and received on
// its WebSocket, and the connectionData of its URL.
type jsCapture struct {
	ConnectionData string   `json:"connectionData"`
	Frames         []string `json:"frames"`
}

// What each run moves through the hub: invocations received, Measure
// messages sent (client.mjs counts them out).
const (
	jqueryInvocations, jqueryMeasures = 11, 8
	tokensInvocations, tokensMeasures = 3, 3 // the tokens checks' two SendToConnection and a GroupBroadcast
	nodeInvocations, nodeMeasures     = 7, 6
)

// TestClassicJSClients runs the official ASP.NET SignalR 2.4.3 JavaScript
// client (jquery.signalR in jsdom, pinned in testdata/jsclient's lockfile)
// against the hub on WebSockets, Server-Sent Events and Long Polling,
// straight and through Azure's ASP.NET-mode redirect, and node-signalr on
// WebSockets. Forever Frame needs a browser's streaming iframe, which
// jsdom does not load as a stream; hubprobe's own client covers it.
func TestClassicJSClients(t *testing.T) {
	localtest.NodeModules(t, jsClientDir, "signalr", "jquery", "jsdom", "eventsource", "ws", "node-signalr")
	plain := startRig(t, Config{}, core.Config{})
	azure := startAzureRig(t)
	var runs []jsRun
	for _, tr := range []aspnet.Transport{aspnet.WebSockets, aspnet.ServerSentEvents, aspnet.LongPolling} {
		runs = append(runs, jsRun{Name: "app server " + string(tr), Client: "jquery", URL: plain.base, Transport: tr, Tokens: true, Capture: tr == aspnet.WebSockets})
	}
	for _, tr := range []aspnet.Transport{aspnet.WebSockets, aspnet.ServerSentEvents, aspnet.LongPolling} {
		runs = append(runs, jsRun{Name: "Azure ASP.NET mode " + string(tr), Client: "jquery", URL: azure.base, Transport: tr})
	}
	runs = append(runs, jsRun{Name: "node-signalr webSockets", Client: "node-signalr", URL: plain.base, Transport: aspnet.WebSockets})
	out := runJSClient(t, runs)
	for i, r := range out {
		checkJSRun(t, runs[i], r)
		switch {
		case runs[i].URL == azure.base && (!strings.HasPrefix(r.Redirected.URL, azure.origin+aspnet.AzureClientPath) || !r.Redirected.AccessToken):
			t.Errorf("%s: the client did not follow the redirect: %+v", r.Name, r.Redirected)
		case runs[i].Capture:
			checkCapture(t, r)
		}
	}
	checkHubCounts(t, "app server", plain, 3*(jqueryInvocations+tokensInvocations)+nodeInvocations, 3*(jqueryMeasures+tokensMeasures)+nodeMeasures)
	checkHubCounts(t, "Azure ASP.NET mode", azure, 3*jqueryInvocations, 3*jqueryMeasures)
}

func runJSClient(t *testing.T, runs []jsRun) []jsResult {
	t.Helper()
	out := wiretest.RunJSClient[jsResult](t, jsClientDir, runs)
	if len(out.Runs) != len(runs) || !out.OK && out.Error != "" {
		t.Fatalf("client reported %d runs of %d: %s", len(out.Runs), len(runs), out.Error)
	}
	return out.Runs
}

// checkJSRun wants every check the run names passed, and the run to have
// named the checks its kind makes.
func checkJSRun(t *testing.T, run jsRun, r jsResult) {
	t.Helper()
	if r.Name != run.Name || r.Error != "" {
		t.Errorf("run %q reported as %q: %s", run.Name, r.Name, r.Error)
	}
	for _, c := range r.Checks {
		if !c.OK {
			t.Errorf("%s: check %q failed: %v", run.Name, c.Name, c.Detail)
		}
	}
	want := 10 // node-signalr's
	if run.Client == "jquery" {
		want = 14
		if run.Tokens {
			want += 5
		}
	}
	if len(r.Checks) != want || len(r.Expected) != want {
		t.Errorf("%s: ran %d checks of %d, want %d", run.Name, len(r.Checks), len(r.Expected), want)
		return
	}
	for i, c := range r.Checks {
		if c.Name != r.Expected[i] {
			t.Errorf("%s: check %d = %q, want %q", run.Name, i, c.Name, r.Expected[i])
		}
	}
	if a := r.IDs["a"]; len(a) != 22 || r.IDs["b"] == a || len(r.IDs["b"]) != 22 {
		t.Errorf("%s: connection ids = %v", run.Name, r.IDs)
	}
}

// checkHubCounts wants the hub to have counted exactly the runs'
// invocations and messages, and every connection gone once stopped.
func checkHubCounts(t *testing.T, name string, r *rig, received, sent float64) {
	t.Helper()
	m := r.hub.Metrics
	wiretest.WaitFor(t, name+" connections to end", func() bool { return testutil.ToFloat64(m.Connections) == 0 })
	if got := [2]float64{testutil.ToFloat64(m.Received), testutil.ToFloat64(m.Sent)}; got != [2]float64{received, sent} {
		t.Errorf("%s: received, sent = %v, want %v %v", name, got, received, sent)
	}
}
