package wpshub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const clientDir = "testdata/wpsclient"

// sdkChecks are the checks of each client run, in order.
var sdkChecks = []string{
	"connected with an id and the user",
	"sendToGroup reaches the sender in the group",
	"sendToGroup carries JSON",
	"REST sendToAll reaches the client",
	"REST sendToUser reaches the client",
	"REST group sendToAll reaches the client",
	"REST sendToConnection reaches the client",
	"REST exists answers",
	"event comes back as the handler's text answer",
	"event comes back as the handler's JSON answer",
	"event comes back as the handler's binary answer",
	"REST closeConnection disconnects with the reason",
}

// TestOfficialWebPubSubSDKs runs Microsoft's Web PubSub SDKs (pinned in
// testdata/wpsclient/package-lock.json) against the hub: the client with
// the reliable and the plain JSON subprotocol, the server SDK minting the
// client tokens from the hub's connection string and calling the REST API,
// and the express event handler the hub sends the client's events to.
func TestOfficialWebPubSubSDKs(t *testing.T) {
	localtest.NodeModules(t, clientDir, "@azure/web-pubsub", "@azure/web-pubsub-client", "@azure/web-pubsub-express", "express")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs")
	cmd.Dir = clientDir
	stdin, _ := cmd.StdinPipe()
	stdoutPipe, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("node: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	stdout := bufio.NewReader(stdoutPipe)
	first, err := stdout.ReadBytes('\n')
	var hello struct{ Handler string }
	if err != nil || json.Unmarshal(first, &hello) != nil || hello.Handler == "" {
		t.Fatalf("first line %q (%v), want the handler URL\nstderr: %s", first, err, stderr.String())
	}
	h, srv, _ := startHub(t, Config{EventHandler: hello.Handler}, core.Config{})
	settings, _ := json.Marshal(map[string]string{"connectionString": srv.ConnectionString(), "hub": "chat"})
	if _, err := stdin.Write(append(settings, '\n')); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	runErr := cmd.Wait()
	var out wiretest.JSOutput
	if err := json.Unmarshal(rest, &out); err != nil {
		t.Fatalf("output is not JSON (%v; run: %v)\nstdout: %s\nstderr: %s", err, runErr, rest, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("node stderr: %s", stderr.String())
	}
	checkWPSRuns(t, out)
	if runErr != nil || !out.OK {
		t.Fatalf("SDK run failed (%v): %s", runErr, rest)
	}
	for _, tc := range []struct {
		request, result string
		want            float64
	}{{"validate", upstreamOK, 1}, {"event", upstreamOK, 6}, {"event", upstreamRefused, 0}, {"event", upstreamError, 0}} {
		if got := testutil.ToFloat64(h.events.requests.WithLabelValues(tc.request, tc.result)); got != tc.want {
			t.Errorf("event_handler_requests{%s,%s} = %v, want %v", tc.request, tc.result, got, tc.want)
		}
	}
	wiretest.WaitFor(t, "every SDK client to be gone", func() bool { return testutil.ToFloat64(h.Metrics.Connections) == 0 })
}

func checkWPSRuns(t *testing.T, out wiretest.JSOutput) {
	t.Helper()
	want := []struct {
		name   string
		checks []string
	}{{"reliable", sdkChecks}, {"json", sdkChecks}, {"other hub", []string{"a token for another hub is refused"}}}
	if len(out.Runs) != len(want) {
		t.Fatalf("%d runs, want %d (error: %s)", len(out.Runs), len(want), out.Error)
	}
	for i, w := range want {
		r := out.Runs[i]
		if r.Name != w.name || r.Error != "" {
			t.Errorf("run %d = %q, error %q; want %q", i, r.Name, r.Error, w.name)
		}
		if len(r.Checks) != len(w.checks) {
			t.Errorf("%s: ran %d checks, want %d", w.name, len(r.Checks), len(w.checks))
			continue
		}
		for j, c := range r.Checks {
			if c.Name != w.checks[j] || !c.OK {
				t.Errorf("%s: check %d %q ok=%v detail=%v, want %q passing", w.name, j, c.Name, c.OK, c.Detail, w.checks[j])
			}
		}
	}
}
