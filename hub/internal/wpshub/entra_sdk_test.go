package wpshub

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/internal/localtest"
)

// entraChecks are the checks of entra.mjs, in order.
var entraChecks = []string{
	"getClientAccessToken asks for the Web PubSub scope",
	"getClientAccessToken answers the hub's wss URL",
	"the client connects as the user of the generated token",
	"REST group send with an Entra token reaches the client",
	"REST sendToUser with an Entra token reaches the client",
}

// TestOfficialWebPubSubSDKsWithEntra runs @azure/web-pubsub with a
// TokenCredential signed in at a loopback Entra tenant: its
// getClientAccessToken calls the hub's :generateToken, and
// @azure/web-pubsub-client connects with the URL. The hub is served over
// TLS, as the SDK sends bearer tokens over https only, with local auth
// disabled.
func TestOfficialWebPubSubSDKsWithEntra(t *testing.T) {
	localtest.NodeModules(t, clientDir, "@azure/web-pubsub", "@azure/web-pubsub-client")
	const clientID, secret = "3c2b1a09-8f7e-4d6c-b5a4-938271605f4e", "js-sdk-secret-value"
	rig := entratest.New(t, entratest.Options{Secrets: map[string]string{clientID: secret}})
	h := newHub(t, Config{}, core.Config{EntraIssuer: rig.Issuer(), EntraHTTPClient: rig.HTTPClient(), DisableLocalAuth: true})
	srv := localtest.TLSServer(t, h.handler())
	t.Cleanup(h.Close) // before the server closes
	settings, _ := json.Marshal(map[string]string{
		"endpoint": srv.URL, "hub": "chat", "clientId": clientID, "clientSecret": secret,
		"tokenEndpoint": rig.AuthorityHost() + rig.Tenant() + "/oauth2/v2.0/token",
	})
	out := runEntraScript(t, string(settings), trustBoth(t, rig, srv.Certificate().Raw))
	if out.Error != "" || len(out.Checks) != len(entraChecks) {
		t.Fatalf("ran %d checks, want %d; error: %s", len(out.Checks), len(entraChecks), out.Error)
	}
	for i, c := range out.Checks {
		if c.Name != entraChecks[i] || !c.OK {
			t.Errorf("check %d %q ok=%v detail=%v, want %q passing", i, c.Name, c.OK, c.Detail, entraChecks[i])
		}
	}
	if got := rig.TokenRequests(); got < 1 {
		t.Errorf("the SDK's credential got %d tokens from the tenant", got)
	}
}

// trustBoth is a PEM file with the tenant's CA and the hub's certificate,
// for NODE_EXTRA_CA_CERTS.
func trustBoth(t *testing.T, rig *entratest.Server, hubCert []byte) string {
	t.Helper()
	tenant, err := os.ReadFile(rig.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	both := slices.Concat(tenant, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hubCert}))
	if err := os.WriteFile(path, both, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func runEntraScript(t *testing.T, settings, caFile string) wiretest.JSResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "entra.mjs", settings)
	cmd.Dir = clientDir
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+caFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var out wiretest.JSResult
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("output is not JSON (%v; run: %v)\nstdout: %s\nstderr: %s", err, runErr, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("node stderr: %s", stderr.String())
	}
	return out
}
