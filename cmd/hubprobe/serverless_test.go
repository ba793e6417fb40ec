package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"github.com/hubprobe/hubprobe/throttle"
)

// runReport is the part of `hubprobe run --output json` these tests read.
type runReport struct {
	Sent, Expected, Received, Lost int64
	Batches                        int64
	Throttled                      map[string]int64
	Outcome, Error                 string
	BatchLatency                   *struct{ P50, Max float64 } `json:"batch_latency_seconds"`
}

func runJSON(t *testing.T, cfg, scenario string) (int, runReport) {
	t.Helper()
	code, out, errOut := runCLI(t, context.Background(), "run", "--config.file", writeConfig(t, cfg), "--scenario", scenario, "--output", "json")
	var rep runReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not a JSON report (%v); exit %d, stderr: %s\n%s", err, code, errOut, out)
	}
	return code, rep
}

const embeddedServerless = `
targets:
  - name: local
    embedded: true
    mode: serverless
    rest_api_version: "2022-06-01"
    embedded_hub:
      access_key: ${HP_LOCAL_KEY}
  - name: app
    embedded: true
    embedded_hub:
      access_key: ${HP_LOCAL_KEY}
      redirect_negotiate: true
  - name: small
    embedded: true
    embedded_hub:
      connection_quota: 2
scenarios:
  - name: rest-user
    target: local
    kind: rest_send_to_user
    schedule: "@every 1h"
    duration: 600ms
    connections: 3
    send_interval: 200ms
    message_size: 128
  - name: push
    target: app
    kind: server_push
    schedule: "@every 1h"
    duration: 400ms
    connections: 2
    send_interval: 200ms
    message_size: 128
    batch_size: 25
    protocol: messagepack
  - name: crowded
    target: small
    kind: echo
    schedule: "@every 1h"
    duration: 200ms
    connections: 4
    send_interval: 100ms
    connect_timeout: 2s
`

// The embedded hub's settings and serverless mode reach the runs: REST
// sends to users of an embedded serverless target, a server push through a
// negotiate that redirects to the emulated service, and a connection quota
// that refuses two of four connections.
func TestEmbeddedHubSettingsReachTheRuns(t *testing.T) {
	t.Setenv("HP_LOCAL_KEY", "local-test-key")
	code, rep := runJSON(t, embeddedServerless, "rest-user")
	if code != exitOK || rep.Sent != 9 || rep.Received != 9 || rep.Lost != 0 {
		t.Errorf("rest-user: exit %d, report %+v; want 9 sent and received", code, rep)
	}
	code, rep = runJSON(t, embeddedServerless, "push")
	if code != exitOK || rep.Sent != 4 || rep.Received != 100 || rep.Batches != 4 || rep.BatchLatency == nil || rep.BatchLatency.P50 <= 0 {
		t.Errorf("push: exit %d, report %+v; want 4 batches of 25 received", code, rep)
	}
	code, rep = runJSON(t, embeddedServerless, "crowded")
	if code != exitFailed || rep.Throttled["connection_limit"] != 2 || !strings.Contains(rep.Error, "2 of 4 connections failed: throttled (connection_limit)") {
		t.Errorf("crowded: exit %d, report %+v; want exit 1 with 2 connection_limit throttles", code, rep)
	}
	_, out, _ := runCLI(t, context.Background(), "run", "--config.file", writeConfig(t, embeddedServerless), "--scenario", "push")
	if !strings.Contains(out, "  Batches: 4, time to last message:") {
		t.Errorf("the text report has no batch line:\n%s", out)
	}
}

// `hubprobe hub` takes the service emulation's settings as flags.
func TestHubCommandEmulatesTheService(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	mustWrite(t, keyFile, []byte("hub-flag-key\n"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub, addr := runOnFreePort(t, ctx, "the hub to listen", 10*time.Second, []string{"hub", "--access-key-file", keyFile, "--connection-quota", "1",
		"--message-rate-limit", "100", "--redirect-negotiate", "--poll-timeout", "5s"}, "--listen", hubListens(t))
	defer func() { cancel(); <-hub.done }()

	cs, err := azure.ParseConnectionString("Endpoint=http://" + addr + ";AccessKey=hub-flag-key;Version=1.0;")
	if err != nil {
		t.Fatal(err)
	}
	dial := func() (*signalrclient.Conn, error) {
		token, err := azure.ClientToken(cs, "signalrbench", "user-1", 0)
		if err != nil {
			t.Fatal(err)
		}
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		return signalrclient.Dial(dctx, signalrclient.Options{URL: cs.ClientURL("signalrbench"), AccessToken: token})
	}
	first, err := dial()
	if err != nil {
		t.Fatalf("first connection with a token signed by the key file's key: %v", err)
	}
	defer first.Close(context.Background())
	if _, err := dial(); err == nil {
		t.Error("a second connection was accepted past --connection-quota 1")
	} else if reason, ok := clientconn.ClassifyThrottle(err); !ok || reason != throttle.ConnectionLimit {
		t.Errorf("second connection: %v (classified %q), want connection_limit", err, reason)
	}
	resp, err := http.Post("http://"+addr+"/signalrbench/negotiate", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"url":"http://`+addr+`/client/?hub=signalrbench"`) {
		t.Errorf("negotiate with --redirect-negotiate answered %s", body)
	}
}

func TestHubCommandRefusesABadKeyFile(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	mustWrite(t, empty, []byte("  \n"))
	missing := filepath.Join(t.TempDir(), "missing")
	for path, want := range map[string]string{empty: "is empty", missing: "no such file or directory"} {
		code, _, errOut := runCLI(t, context.Background(), "hub", "--listen", freePort(t), "--access-key-file", path)
		if code != exitUsage || !strings.Contains(errOut, path) || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 naming the file and %q", path, code, errOut, want)
		}
	}
	code, _, errOut := runCLI(t, context.Background(), "hub", "--listen", freePort(t), "--redirect-negotiate")
	if code != exitUsage || !strings.Contains(errOut, "needs an access key") {
		t.Errorf("--redirect-negotiate alone: exit %d, stderr %q; want exit 2", code, errOut)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("the missing file exists")
	}
}
