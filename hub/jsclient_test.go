package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

const jsClientDir = "testdata/jsclient"

// TestOfficialJSClient runs the @microsoft/signalr client (pinned in
// testdata/jsclient/package-lock.json) against the hub over WebSockets.
func TestOfficialJSClient(t *testing.T) {
	ensureNodeModules(t)
	_, srv, _ := startHub(t, Options{})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs", srv.URL())
	cmd.Dir = jsClientDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()

	var out struct {
		OK     bool              `json:"ok"`
		IDs    map[string]string `json:"ids"`
		Error  string            `json:"error"`
		Checks []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Detail any    `json:"detail"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("client output is not JSON (%v; run: %v)\nstdout: %s\nstderr: %s", err, runErr, stdout.String(), stderr.String())
	}
	t.Logf("client output: %s", stdout.String())
	for _, c := range out.Checks {
		if !c.OK {
			t.Errorf("check %q failed: %v", c.Name, c.Detail)
		}
	}
	if runErr != nil || !out.OK || out.Error != "" {
		t.Fatalf("client failed: %v %s\nstderr: %s", runErr, out.Error, stderr.String())
	}
	want := []string{
		"connected with the negotiated transport",
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
	if len(out.Checks) != len(want) {
		t.Fatalf("client ran %d checks, want %d", len(out.Checks), len(want))
	}
	for i, name := range want {
		if out.Checks[i].Name != name {
			t.Errorf("check %d = %q, want %q", i, out.Checks[i].Name, name)
		}
	}
	if a := out.IDs["a"]; len(a) != 22 || out.IDs["getConnectionId"] != a || out.IDs["b"] == a {
		t.Errorf("connection ids = %v", out.IDs)
	}
}

// ensureNodeModules installs the pinned client with npm ci when needed.
func ensureNodeModules(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required for this test: %v", tool, err)
		}
	}
	if _, err := os.Stat(filepath.Join(jsClientDir, "node_modules", "@microsoft", "signalr")); err == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = jsClientDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
}
