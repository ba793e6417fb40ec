package signalrhub

import (
	"encoding/json"
	"testing"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/internal/localtest"
)

const jsClientDir = "testdata/jsclient"

// jsRun is one pass of the official client over every hub method.
type jsRun struct {
	Name      string `json:"name"`
	URL       string `json:"url"`
	Transport string `json:"transport"`
	Protocol  string `json:"protocol"`
}

// jsChecks are the checks every run makes, in order.
var jsChecks = []string{
	"connected with the requested transport",
	"GetConnectionId equals OnConnected id",
	"ConnectionId callback",
	"Echo returns the payload unchanged",
	"Broadcast reaches both connections",
	"SendToClient reaches the addressed connection",
	"SendToClient does not reach the sender",
	"JoinGroup callback",
	"SendToGroup reaches the member",
	"SendToGroup skips the non-member",
	"LeaveGroup callback",
	"SendToGroup skips a connection that left",
	"StreamingEcho echoes every item in order",
	"unknown method is rejected",
	"stopped cleanly",
}

// TestOfficialJSClient runs the @microsoft/signalr client (and its
// MessagePack protocol, both pinned in testdata/jsclient/package-lock.json)
// against the hub over every transport with JSON, and over WebSockets and
// Long Polling with MessagePack; then through the Azure SignalR Service
// emulation, following the app server's negotiate redirect. All runs share
// one node process.
func TestOfficialJSClient(t *testing.T) {
	ensureNodeModules(t)
	_, plain, _ := startHub(t, Config{}, core.Config{})
	_, azure, _ := startAzureHub(t, Config{RedirectNegotiate: true}, core.Config{})
	var runs []jsRun
	for _, hub := range []struct {
		name string
		srv  *wiretest.TestServer
	}{{"app server", plain}, {"Azure default mode", azure}} {
		for _, combo := range [][2]string{
			{"WebSockets", "json"}, {"ServerSentEvents", "json"}, {"LongPolling", "json"},
			{"WebSockets", "messagepack"}, {"LongPolling", "messagepack"},
		} {
			runs = append(runs, jsRun{Name: hub.name + " " + combo[0] + " " + combo[1], URL: hub.srv.URL(), Transport: combo[0], Protocol: combo[1]})
		}
	}
	out := runJSClient(t, runs)
	if b, _ := json.MarshalIndent(out, "", " "); !out.OK {
		t.Logf("%s", b)
	}
	if len(out.Runs) != len(runs) {
		t.Fatalf("client reported %d runs, want %d (error: %s)", len(out.Runs), len(runs), out.Error)
	}
	for i, r := range out.Runs {
		checkJSRun(t, runs[i].Name, r)
	}
	if !out.OK {
		t.Fatalf("client failed: %s", out.Error)
	}
}

func runJSClient(t *testing.T, runs []jsRun) wiretest.JSOutput {
	t.Helper()
	return wiretest.RunJSClient[wiretest.JSResult](t, jsClientDir, runs)
}

func checkJSRun(t *testing.T, name string, r wiretest.JSResult) {
	t.Helper()
	if r.Name != name {
		t.Errorf("run %q reported as %q", name, r.Name)
	}
	if r.Error != "" {
		t.Errorf("%s: %s", name, r.Error)
	}
	for _, c := range r.Checks {
		if !c.OK {
			t.Errorf("%s: check %q failed: %v", name, c.Name, c.Detail)
		}
	}
	if len(r.Checks) != len(jsChecks) {
		t.Errorf("%s: ran %d checks, want %d", name, len(r.Checks), len(jsChecks))
		return
	}
	for i, want := range jsChecks {
		if r.Checks[i].Name != want {
			t.Errorf("%s: check %d = %q, want %q", name, i, r.Checks[i].Name, want)
		}
	}
	if a := r.IDs["a"]; len(a) != 22 || r.IDs["getConnectionId"] != a || r.IDs["b"] == a {
		t.Errorf("%s: connection ids = %v", name, r.IDs)
	}
}

// ensureNodeModules installs the pinned clients with npm ci when needed.
func ensureNodeModules(t *testing.T) {
	t.Helper()
	localtest.NodeModules(t, jsClientDir, "@microsoft/signalr", "@microsoft/signalr-protocol-msgpack")
}
