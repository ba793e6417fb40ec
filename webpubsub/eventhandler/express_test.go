package eventhandler

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
)

const expressDir = "testdata/express"

// TestAnswersAsExpress sends the same requests to hubprobe's handler and to
// an echo handler built with the official @azure/web-pubsub-express
// (pinned in testdata/express/package-lock.json), and compares status,
// WebHook-Allowed-Origin, Content-Type and body. Express never checks
// ce-signature: where hubprobe refuses a bad one with 401, express answers
// as for a good one, and the test pins that difference.
func TestAnswersAsExpress(t *testing.T) {
	express := startExpress(t)
	_, ours := serve(t, Options{})
	for _, tt := range handlerCases {
		t.Run(tt.name, func(t *testing.T) {
			got, want := send(t, ours, tt.rq), send(t, express, tt.rq)
			switch tt.name {
			case "bad signature", "no signature":
				if want.code != http.StatusOK || got.code != http.StatusUnauthorized {
					t.Errorf("status: hubprobe %d, express %d; want 401 and express's unchecked 200", got.code, want.code)
				}
				return
			case "invalid json":
				if want.code != http.StatusInternalServerError || got.code != http.StatusBadRequest {
					t.Errorf("status: hubprobe %d, express %d; want 400 and express's 500", got.code, want.code)
				}
				return
			}
			if got.code != want.code || got.allowedOrigin != want.allowedOrigin || got.contentType != want.contentType || !bytes.Equal(got.body, want.body) {
				t.Errorf("hubprobe answered %d %q %q %q\n express answered %d %q %q %q", got.code, got.allowedOrigin, got.contentType, got.body,
					want.code, want.allowedOrigin, want.contentType, want.body)
			}
		})
	}
	for name, rq := range notItsRequests() {
		if got, want := send(t, ours, rq), send(t, express, rq); got.code != want.code {
			t.Errorf("%s: hubprobe %d, express %d", name, got.code, want.code)
		}
	}
}

// startExpress runs testdata/express/echo.mjs and returns its base URL;
// closing its stdin at cleanup ends it.
func startExpress(t *testing.T) string {
	t.Helper()
	localtest.NodeModules(t, expressDir, "@azure/web-pubsub-express", "express")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cmd := exec.CommandContext(ctx, "node", "echo.mjs", testHub, hubPath(testHub))
	// express logs the stack of the invalid JSON case; shown on failure only.
	var stderr bytes.Buffer
	cmd.Dir, cmd.Stderr = expressDir, &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
		cancel()
		if t.Failed() {
			t.Logf("express stderr:\n%s", stderr.String())
		}
	})
	var ready struct{ Port int }
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &ready) != nil || ready.Port == 0 {
		t.Fatalf("express did not start: %q %v", line, err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", ready.Port)
}
