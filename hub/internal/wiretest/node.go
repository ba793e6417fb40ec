package wiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"
)

// JSReport is the report of a JavaScript client script that ran several
// times, each run reported as an R.
type JSReport[R any] struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	Runs  []R    `json:"runs"`
}

// jsClientTimeout bounds one run of a client script, all its runs
// together.
const jsClientTimeout = 90 * time.Second

// RunJSClient runs `node client.mjs <runs as JSON>` in dir, for at most
// jsClientTimeout, and returns the report it prints. It fails t when the
// script prints no report, or exits with a failure but reports success.
func RunJSClient[R any](t testing.TB, dir string, runs any) JSReport[R] {
	t.Helper()
	arg, err := json.Marshal(runs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), jsClientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs", string(arg))
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("the client's runs took %v", time.Since(start).Round(time.Millisecond))
	var out JSReport[R]
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("client output is not JSON (%v; run: %v)\nstdout: %s\nstderr: %s", err, runErr, stdout.String(), stderr.String())
	}
	if runErr != nil && out.OK {
		t.Fatalf("client exited with %v but reported success\nstderr: %s", runErr, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("client stderr: %s", stderr.String())
	}
	return out
}
