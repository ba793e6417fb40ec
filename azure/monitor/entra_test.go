package monitor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/azure/monitor"
	"github.com/hubprobe/hubprobe/azure/monitortest"
	"github.com/hubprobe/hubprobe/azure/oidc"
)

const (
	entraClient = "6f0e1c2a-0000-4000-8000-00000000c11e"
	entraSecret = "monitor-reader-s3cret"
)

// entraReader is a reader signed in with azidentity's client secret
// credential at a loopback Entra tenant, whose tokens the rig accepts when
// they verify for the endpoint's audience.
func entraReader(t *testing.T, g *rig, secret string) (*monitor.Reader, *entratest.Server) {
	t.Helper()
	tenant := entratest.New(t, entratest.Options{Secrets: map[string]string{entraClient: entraSecret}})
	verifier, err := oidc.NewVerifier(tenant.Issuer(), tenant.HTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	g.srv.Accept(func(token string) bool {
		_, err := verifier.Verify(t.Context(), token, g.srv.URL)
		return err == nil
	})
	cred, err := azidentity.NewClientSecretCredential(tenant.Tenant(), entraClient, secret, &azidentity.ClientSecretCredentialOptions{
		ClientOptions: azcore.ClientOptions{
			Cloud:     cloud.Configuration{ActiveDirectoryAuthorityHost: tenant.AuthorityHost()},
			Transport: tenant.HTTPClient(),
		},
		DisableInstanceDiscovery: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return g.start(t, func(o *monitor.Options) { o.Credential = cred }), tenant
}

// A client secret signs in at Entra ID for the endpoint's audience; the
// reader reads through the token, which the credential caches.
func TestReaderSignsInWithAClientSecret(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	serveSignalRUsage(g)
	r, tenant := entraReader(t, g, entraSecret)
	g.waitReads(t, 1, 10*time.Second)
	if r.ServerLoad() != 0.75 || g.value(t, "hubprobe_service_connections", target) != 850 {
		t.Fatalf("server load %v, connections %v; status %+v", r.ServerLoad(), g.value(t, "hubprobe_service_connections", target), r.Status())
	}
	if n := tenant.TokenRequests(); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
	if reqs := g.srv.Requests(); len(reqs) != 1 || reqs[0].Status != 200 {
		t.Errorf("requests %+v", reqs)
	}
}

// A wrong secret fails the read as auth, named by Entra's AADSTS code, and
// neither the secret nor anything Entra answered beyond the code shows.
func TestReaderNamesAWrongSecretsAADSTSCode(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	const wrong = "not-the-s3cret-at-all"
	r, _ := entraReader(t, g, wrong)
	g.waitReads(t, 1, 10*time.Second)
	st := r.Status()
	if st.LastFailure != "auth: sign-in failed: AADSTS7000215" || strings.Contains(st.LastFailure, wrong) {
		t.Errorf("failure %q", st.LastFailure)
	}
	if n := len(g.srv.Requests()); n != 0 {
		t.Errorf("%d requests to Azure Monitor without a token", n)
	}
}
