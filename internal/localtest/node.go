package localtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// NodeModules makes sure the npm packages pinned in dir's package-lock.json
// are installed, running npm ci when one of packages (paths under
// node_modules, such as "@azure/web-pubsub-express") is missing. Tests
// that run the official JavaScript SDKs need node and npm.
func NodeModules(t testing.TB, dir string, packages ...string) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required for this test: %v", tool, err)
		}
	}
	installed := true
	for _, pkg := range packages {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
			installed = false
		}
	}
	if installed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}
