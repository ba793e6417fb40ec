package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure/entratest"
)

const (
	entraClient = "0f1e2d3c-4b5a-4697-8877-665544332211"
	entraSecret = "entra-client-s3cr3t~abcdef0123456789"
	entraHubKey = "entra-hub-local-key-0123456789"
)

// entraTargets are a SignalR service in serverless mode and a Web PubSub
// service on one reference hub, each once signed in with an application's
// client secret (${HP_CLIENT_SECRET}) and once with the hub's access key.
func entraTargets(addr, tenant string) string {
	entra := "Endpoint=http://" + addr + ";AuthType=azure.app;ClientId=" + entraClient + ";TenantId=" + tenant + ";ClientSecret=${HP_CLIENT_SECRET};Version=1.0;"
	keyed := "Endpoint=http://" + addr + ";AccessKey=" + entraHubKey + ";Version=1.0;"
	var b strings.Builder
	b.WriteString("global:\n  start_jitter: false\ntargets:\n")
	for _, t := range []struct{ name, service, cs, hub string }{
		{"signalr", "signalr", entra, "signalrbench"}, {"signalr-key", "signalr", keyed, "signalrbench"},
		{"wps", "webpubsub", entra, "probe"}, {"wps-key", "webpubsub", keyed, "probe"},
	} {
		b.WriteString("  - {name: " + t.name + ", service: " + t.service + ", connection_string: \"" + t.cs + "\", hub: " + t.hub + "}\n")
	}
	b.WriteString("scenarios:\n")
	for _, s := range entraScenarios {
		for _, suffix := range []string{"", "-key"} {
			b.WriteString("  - {name: " + s.target + suffix + "-" + s.kind + ", target: " + s.target + suffix + ", kind: " + s.kind +
				`, schedule: "@every 1h", duration: 1s, connections: 4, group_size: 2, send_interval: 250ms, message_size: 128, loss_timeout: 2s}` + "\n")
		}
	}
	return b.String()
}

// entraScenarios are every kind that runs on a service without an upstream
// event handler.
var entraScenarios = []struct{ target, kind string }{
	{"signalr", "rest_broadcast"}, {"signalr", "rest_send_to_user"}, {"signalr", "rest_send_to_group"},
	{"wps", "send_to_group"}, {"wps", "rest_broadcast"}, {"wps", "rest_send_to_user"},
	{"wps", "rest_send_to_group"}, {"wps", "rest_send_to_connection"},
}

// entraRig is a loopback tenant with one application and
// `hubprobe hub --entra.issuer … --disable-local-auth` trusting it.
type entraRig struct {
	tenant *entratest.Server
	addr   string
	env    []string
}

func startEntraRig(t *testing.T) entraRig {
	tenant := entratest.New(t, entratest.Options{Secrets: map[string]string{entraClient: entraSecret}})
	keyFile := filepath.Join(t.TempDir(), "key")
	mustWrite(t, keyFile, []byte(entraHubKey+"\n"))
	trust := "SSL_CERT_FILE=" + tenant.CAFile()
	addr := startHubEnv(t, []string{trust}, "--access-key-file", keyFile, "--entra.issuer", tenant.Issuer(), "--disable-local-auth")
	return entraRig{tenant: tenant, addr: addr,
		env: []string{trust, "AZURE_AUTHORITY_HOST=" + tenant.AuthorityHost(), "HP_CLIENT_SECRET=" + entraSecret}}
}

// hubprobe signed in as an application runs every REST kind of both
// services and Web PubSub's group kind against a hub with local auth
// disabled, losing nothing; the same runs signed with the hub's key fail
// with the hub's 401 reason.
func TestEntraSignInRunsAgainstAHubWithoutLocalAuth(t *testing.T) {
	rig := startEntraRig(t)
	path := writeConfig(t, entraTargets(rig.addr, rig.tenant.Tenant()))
	hubprobeBinary(t)
	for _, s := range entraScenarios {
		name := s.target + "-" + s.kind
		rep := runProcessEnv(path, name, rig.env, nil)
		if rep.code != exitOK || rep.Sent == 0 || rep.Received != rep.Expected || rep.Lost != 0 || rep.Expected < rep.Sent {
			t.Errorf("%s with Entra ID: exit %d, sent %d, expected %d, received %d, lost %d: %s %s",
				name, rep.code, rep.Sent, rep.Expected, rep.Received, rep.Lost, rep.Error, rep.stderr)
		}
		if strings.Contains(rep.stdout+rep.stderr, entraSecret) {
			t.Errorf("%s printed the client secret", name)
		}
		rep = runProcessEnv(path, s.target+"-key-"+s.kind, rig.env, nil)
		if rep.code != exitFailed || !strings.Contains(rep.Error, "401") || rep.Received != 0 {
			t.Errorf("%s with the access key: exit %d, received %d, error %q; want exit 1 and the hub's 401", name, rep.code, rep.Received, rep.Error)
		}
	}
	if n := rig.tenant.TokenRequests(); n < 1 {
		t.Errorf("the tenant issued %d tokens", n)
	}
}

const (
	entraWorkloadClient = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
	// entraAssertion is a workload-identity token file's content; JWT-shaped,
	// so the scan for "eyJ" below would find it too.
	entraAssertion = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.federated-sig-0123"
	entraWrong     = "wrong-client-s3cr3t~but-looks-real"
)

// entraDaemonConfig probes one Web PubSub service three ways: as the
// application, with a wrong secret, and as the pod's workload identity.
func entraDaemonConfig(addr, tenant string) string {
	app := func(secretVar string) string {
		return "Endpoint=http://" + addr + ";AuthType=azure.app;ClientId=" + entraClient + ";TenantId=" + tenant + ";ClientSecret=${" + secretVar + "};"
	}
	return `global:
  start_jitter: false
targets:
  - {name: good, service: webpubsub, hub: probe, connection_string: "` + app("HP_CLIENT_SECRET") + `"}
  - {name: bad, service: webpubsub, hub: probe, connection_string: "` + app("HP_BAD_SECRET") + `"}
  - {name: pod, service: webpubsub, hub: probe, connection_string: "Endpoint=http://` + addr + `;AuthType=azure;"}
scenarios:
  - {name: good, target: good, kind: rest_broadcast, schedule: "@every 1h", duration: 1s, connections: 2, send_interval: 250ms}
  - {name: bad, target: bad, kind: rest_broadcast, schedule: "@every 1h", duration: 1s, connections: 2, send_interval: 250ms}
  - {name: pod, target: pod, kind: rest_broadcast, schedule: "@every 1h", duration: 1s, connections: 2, send_interval: 250ms}
`
}

// A wrong client secret fails its runs with reason auth and Entra's code on
// the status page, beside a good secret and a workload identity that pass;
// no output of the daemon, of `run` or of `check` holds a secret, the
// assertion or any token.
func TestEntraFailuresShowTheCodeAndNoSecret(t *testing.T) {
	tenant := entratest.New(t, entratest.Options{
		Secrets:   map[string]string{entraClient: entraSecret},
		Federated: map[string]string{entraWorkloadClient: entraAssertion},
	})
	keyFile := filepath.Join(t.TempDir(), "key")
	mustWrite(t, keyFile, []byte(entraHubKey+"\n"))
	trust := "SSL_CERT_FILE=" + tenant.CAFile()
	addr := startHubEnv(t, []string{trust}, "--access-key-file", keyFile, "--entra.issuer", tenant.Issuer(), "--disable-local-auth")
	env := []string{trust, "AZURE_AUTHORITY_HOST=" + tenant.AuthorityHost(), "HP_CLIENT_SECRET=" + entraSecret,
		"HP_BAD_SECRET=" + entraWrong, "AZURE_CLIENT_ID=" + entraWorkloadClient, "AZURE_TENANT_ID=" + tenant.Tenant(),
		"AZURE_FEDERATED_TOKEN_FILE=" + tenant.WriteTokenFile(t, entraWorkloadClient),
		// Only the workload identity: a failing chain must not go on to
		// the instance metadata endpoint, which is off this machine.
		"AZURE_TOKEN_CREDENTIALS=WorkloadIdentityCredential"}
	path := writeConfig(t, entraDaemonConfig(addr, tenant.Tenant()))
	outputs := entraDaemonOutputs(t, path, env)
	for _, name := range []string{"good", "bad"} {
		rep := runProcessEnv(path, name, env, nil)
		outputs["run "+name] = rep.stdout + rep.stderr
	}
	_, out, errOut := runCLI(t, context.Background(), "check", "--config.file", path)
	outputs["check"] = out + errOut

	status := outputs["serve /status.json"]
	if !strings.Contains(status, "AADSTS7000215") || !strings.Contains(outputs["run bad"], "AADSTS7000215") {
		t.Errorf("Entra's code is not on the status page or in the run's report:\n%s\n%s", status, outputs["run bad"])
	}
	metrics := outputs["serve /metrics"]
	for _, want := range []string{
		`hubprobe_connection_failures_total{reason="auth",scenario="bad",target="bad"} 2`,
		`hubprobe_runs_total{result="success",scenario="good",target="good"} 1`,
		`hubprobe_runs_total{result="success",scenario="pod",target="pod"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s\n%s", want, outputs["serve /status.json"])
		}
	}
	for name, text := range outputs {
		for _, secret := range []string{entraSecret, entraWrong, entraAssertion, "s3cr3t", "eyJ"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains %q", name, secret)
			}
		}
	}
}

// entraDaemonOutputs serves the config as a child process until its three
// scenarios have run, and keeps its pages and log.
func entraDaemonOutputs(t *testing.T, path string, env []string) map[string]string {
	hubprobe, web := childOnFreePort(t, "three finished runs", 40*time.Second, env,
		[]string{"--log.level=debug", "--config.file", path}, "--web.listen-address", func(web string) bool {
			return scenariosRun(get(t, "http://"+web+"/status.json")) >= 3
		})
	outputs := map[string]string{}
	for _, page := range []string{"/metrics", "/", "/status.json"} {
		outputs["serve "+page] = get(t, "http://"+web+page)
	}
	_ = hubprobe.stop()
	outputs["serve log"] = hubprobe.log.String()
	return outputs
}

// scenariosRun is how many scenarios on the status page have a last run (0
// before the daemon serves a page). A run's outcome shows twice on the page
// (its scenario's last run and the recent runs), so counting outcomes would
// stop at two runs of three.
func scenariosRun(status string) int {
	var page struct {
		Scenarios []struct {
			LastRun *struct{} `json:"last_run"`
		} `json:"scenarios"`
	}
	if json.Unmarshal([]byte(status), &page) != nil {
		return 0
	}
	n := 0
	for _, s := range page.Scenarios {
		if s.LastRun != nil {
			n++
		}
	}
	return n
}
