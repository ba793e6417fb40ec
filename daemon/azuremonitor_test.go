package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/azure/monitortest"
	"github.com/hubprobe/hubprobe/azure/oidc"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/scenarios"
)

// monitoredConfig runs the echo against the embedded hub, and reads the
// metrics of target "azure" from the rig.
func monitoredConfig(srv *monitortest.Server, id string) string {
	return fmt.Sprintf(`
global:
  start_jitter: false
targets:
  - name: local
    embedded: true
  - name: azure
    url: https://chat.example.com/chat
    azure_monitor:
      resource_id: %s
      endpoint: %s
scenarios:
  - name: echo
    target: local
    kind: echo
    schedule: "@every 1h"
    duration: 1s
    connections: 1
    send_interval: 500ms
    loss_timeout: 1s
`, id, srv.URL)
}

// monitoredDaemon starts a daemon on monitoredConfig once prepare has set
// the rig up. Its readers sign in with azidentity's default chain, which
// finds the rig's App Service managed identity endpoint.
func monitoredDaemon(t *testing.T, prepare func(srv *monitortest.Server, id string), adjust ...func(*Options)) (*Daemon, *monitortest.Server, string) {
	t.Helper()
	srv := monitortest.New(t)
	id := srv.AddResource(monitortest.SignalR, "chat")
	prepare(srv, id)
	for _, v := range []string{"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE"} {
		t.Setenv(v, "") // restores the variable after the test
		// An empty AZURE_CLIENT_ID would name a user-assigned identity.
		if err := os.Unsetenv(v); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("IDENTITY_ENDPOINT", srv.IdentityEndpoint)
	t.Setenv("IDENTITY_HEADER", srv.IdentityHeader)
	path := filepath.Join(t.TempDir(), "hubprobe.yml")
	writeConfig(t, path, monitoredConfig(srv, id))
	opts := Options{Logger: zerolog.Nop(), ConfigFile: path, AzureTransport: srv.Client}
	for _, a := range adjust {
		a(&opts)
	}
	d, err := New(localtest.Ctx(t, 30*time.Second), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d, srv, path
}

// value is the value of the series of name with these labels; ok is false
// when there is none.
func value(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := 0
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] == l.GetValue() {
					match++
				}
			}
			if match == len(labels) {
				return m.GetGauge().GetValue() + m.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}

func waitForValue(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if v, ok := value(t, reg, name, labels); ok && v == want {
			return
		}
		if time.Now().After(deadline) {
			v, ok := value(t, reg, name, labels)
			t.Fatalf("%s%v = %v (exists %v), want %v", name, labels, v, ok, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A 403 from Azure Monitor counts once as forbidden, and the status page
// names the status and Azure's code.
func TestDaemonShowsAForbiddenAzureMonitorRead(t *testing.T) {
	d, _, _ := monitoredDaemon(t, func(srv *monitortest.Server, _ string) {
		srv.Respond(monitortest.Answer{Status: 403, Body: `{"error":{"code":"AuthorizationFailed","message":"no Monitoring Reader role"}}`})
	})
	waitForValue(t, d.reg, "hubprobe_service_metrics_read_failures_total", map[string]string{"target": "azure", "reason": "forbidden"}, 1)
	srv := localtest.Server(t, d.Handler())
	resp, err := srv.Client().Get(srv.URL + "/status.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		ServiceMetrics []struct {
			Target      string `json:"target"`
			Failing     bool   `json:"failing"`
			LastFailure string `json:"last_failure"`
		} `json:"service_metrics"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.ServiceMetrics) != 1 || st.ServiceMetrics[0].Target != "azure" || !st.ServiceMetrics[0].Failing ||
		st.ServiceMetrics[0].LastFailure != "forbidden: HTTP 403 AuthorizationFailed" {
		t.Errorf("status.json service_metrics %+v", st.ServiceMetrics)
	}
}

// The service's server load reaches hubprobe_server_load_ratio; a reload
// without azure_monitor stops the reader and drops its series.
func TestDaemonReadsServerLoadAndStopsTheReaderOnReload(t *testing.T) {
	d, srv, path := monitoredDaemon(t, func(srv *monitortest.Server, id string) { srv.Set(id, "ServerLoad", 75) })
	azure := map[string]string{"target": "azure"}
	waitForValue(t, d.reg, "hubprobe_server_load_ratio", azure, 0.75)

	cfg := monitoredConfig(srv, "x")
	writeConfig(t, path, before(t, cfg, "    azure_monitor:")+onward(t, cfg, "scenarios:"))
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hubprobe_server_load_ratio", "hubprobe_service_metrics_reads_total", "hubprobe_service_metrics_age_seconds"} {
		if v, ok := value(t, d.reg, name, azure); ok {
			t.Errorf("%s{target=azure} = %v after the reload removed azure_monitor", name, v)
		}
	}
}

// A target that turns from read from Azure Monitor into embedded and back
// keeps a server load each time: the embedded hub's, then the service's.
func TestDaemonServerLoadFollowsATargetBetweenEmbeddedAndMonitored(t *testing.T) {
	d, srv, path := monitoredDaemon(t, func(srv *monitortest.Server, id string) { srv.Set(id, "ServerLoad", 75) })
	azure := map[string]string{"target": "azure"}
	waitForValue(t, d.reg, "hubprobe_server_load_ratio", azure, 0.75)
	monitored, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(monitored)
	embedded := before(t, cfg, "    url: https://chat") + "    embedded: true\n" + onward(t, cfg, "scenarios:")
	reload := func(body string) {
		writeConfig(t, path, body)
		if err := d.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	reload(embedded)
	if v, ok := value(t, d.reg, "hubprobe_server_load_ratio", azure); !ok || v == 0.75 {
		t.Fatalf("hubprobe_server_load_ratio{target=azure} = %v (exists %v) once embedded, want the idle hub's own", v, ok)
	}
	reload(cfg)
	waitForValue(t, d.reg, "hubprobe_server_load_ratio", azure, 0.75)
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d queries, want one per reader started", n)
	}
}

// Only shard 0 reads Azure Monitor: every shard would read the same figures,
// and each query is billed.
func TestDaemonReadsAzureMonitorOnShardZeroOnly(t *testing.T) {
	d, srv, _ := monitoredDaemon(t, func(*monitortest.Server, string) {},
		func(o *Options) { o.Shard = scenarios.Shard{Index: 1, Count: 2} })
	time.Sleep(300 * time.Millisecond) // a reader reads at once
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("shard 1 sent %d queries", n)
	}
	if _, ok := value(t, d.reg, "hubprobe_service_metrics_reads_total", map[string]string{"target": "azure"}); ok || len(d.readers.statuses()) != 0 {
		t.Error("shard 1 runs a reader")
	}
}

// Stop ends the readers with everything else.
func TestDaemonStopEndsTheReaders(t *testing.T) {
	var before int
	d, srv, _ := monitoredDaemon(t, func(*monitortest.Server, string) { before = runtime.NumGoroutine() })
	waitForValue(t, d.reg, "hubprobe_service_metrics_reads_total", map[string]string{"target": "azure"}, 1)
	d.Stop()
	srv.CloseIdleConnections()
	localtest.CheckNoLeak(t, before)
}

// A target whose connection string names AuthType=azure.app reads Azure
// Monitor as that application: its client secret signs in at Entra ID.
func TestDaemonReaderSignsInWithTheTargetsCredential(t *testing.T) {
	srv := monitortest.New(t)
	id := srv.AddResource(monitortest.SignalR, "chat")
	srv.Set(id, "ServerLoad", 75)
	tenant := entratest.New(t, entratest.Options{Secrets: map[string]string{"reader-app": "app-s3cret"}})
	t.Setenv("AZURE_AUTHORITY_HOST", tenant.AuthorityHost())
	verifier, err := oidc.NewVerifier(tenant.Issuer(), tenant.HTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	srv.Accept(func(token string) bool { _, err := verifier.Verify(t.Context(), token, srv.URL); return err == nil })
	cfg := strings.Replace(monitoredConfig(srv, id), "    url: https://chat.example.com/chat\n",
		"    connection_string: \"Endpoint=https://chat.service.signalr.net;AuthType=azure.app;ClientId=reader-app;TenantId="+
			tenant.Tenant()+";ClientSecret=app-s3cret;Version=1.0;\"\n    hub: chat\n", 1)
	path := filepath.Join(t.TempDir(), "hubprobe.yml")
	writeConfig(t, path, cfg)
	d, err := New(localtest.Ctx(t, 30*time.Second), Options{Logger: zerolog.Nop(), ConfigFile: path,
		AzureTransport: trusting(t, srv.CAFile, tenant.CAFile())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	waitForValue(t, d.reg, "hubprobe_server_load_ratio", map[string]string{"target": "azure"}, 0.75)
	if n := tenant.TokenRequests(); n != 1 {
		t.Errorf("%d token requests at Entra ID, want 1", n)
	}
}

// trusting is an HTTP client that trusts the certificates in these PEM
// files only.
func trusting(t *testing.T, caFiles ...string) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	for _, f := range caFiles {
		pem, err := os.ReadFile(f)
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			t.Fatalf("CA file %s: %v", f, err)
		}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}
