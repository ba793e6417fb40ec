package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/alerts"
	"github.com/hubprobe/hubprobe/azure/monitortest"
	"github.com/hubprobe/hubprobe/internal/cataloguetest"
)

// The Azure Monitor test normally takes about 20 s: the readers read at
// once, and the alerts are pending within a few evaluations.
const (
	azureMonitorBudget = 2 * time.Minute
	pendingLimit       = 45 * time.Second
)

// azureMonitorSection is the catalogue section of the metrics only a
// target with azure_monitor has.
const azureMonitorSection = "Registered by the Azure Monitor reader"

var metricName = regexp.MustCompile(`hubprobe_\w+`)

// readsAzureMonitor reports whether expr reads a metric only a target with
// azure_monitor has.
func readsAzureMonitor(expr string) bool {
	rows, err := cataloguetest.Read(filepath.Join("..", "docs", "metrics.md"))
	if err != nil {
		panic(err)
	}
	for _, name := range metricName.FindAllString(expr, -1) {
		if rows[name].Section == azureMonitorSection {
			return true
		}
	}
	return false
}

func notAzureMonitor(expr string) bool { return !readsAzureMonitor(expr) }

// azureMonitorConfig probes the embedded hub, and reads two services'
// figures from the rig: busy at 75 % server load and 85 % of its tier's
// connections, calm at 45 % and 30 %.
func azureMonitorConfig(rig *monitortest.Server, busy, calm string) []byte {
	target := func(name, id string) string {
		return fmt.Sprintf(`  - name: %s
    url: https://%s.example.com/chat
    tier: {service: signalr, units: 1}
    azure_monitor:
      resource_id: %s
      endpoint: %s
`, name, name, id, rig.URL)
	}
	return []byte(`global:
  start_jitter: false
targets:
  - name: local
    embedded: true
` + target("busy", busy) + target("calm", calm) + `scenarios:
  - name: echo
    target: local
    kind: echo
    schedule: "@every 1h"
    duration: 1s
    connections: 2
    send_interval: 500ms
    loss_timeout: 1s
`)
}

// serveUsage makes a resource report a minute of SignalR usage.
func serveUsage(rig *monitortest.Server, id string, loadPercent, connections float64) {
	for name, v := range map[string]float64{
		"ServerLoad": loadPercent, "ConnectionCount": connections, "ConnectionQuotaUtilization": connections / 10,
		"InboundTraffic": 60000, "OutboundTraffic": 120000, "MessageCount": 600,
		"ServerConnectionLatency": 20, "SystemErrors": 0.1, "UserErrors": 2,
	} {
		rig.Set(id, name, v)
	}
	rig.SetCloses(id, map[string]float64{"Normal": 60})
}

// azureMonitorEnv is the test's environment without any Azure identity of
// its own, plus the rig's managed identity endpoint and certificate: the
// daemon's default credential chain signs in there.
func azureMonitorEnv(rig *monitortest.Server) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "AZURE_") || strings.HasPrefix(name, "IDENTITY_") || strings.HasPrefix(name, "MSI_") || strings.HasPrefix(name, "SSL_CERT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, rig.Env()...)
}

// TestAzureMonitorAgainstRealPrometheus runs the built daemon reading two
// services' figures from a loopback Azure Monitor, under a real Prometheus
// in each ingestion mode with the shipped rules. Every dashboard query and
// recording rule of those figures must return data; a server load of 75 %
// must make HubprobeServerLoadHigh pending and 45 % must not; connections at
// 85 % of the tier's limit must make HubprobeTierHeadroomLow pending and
// 30 % must not.
func TestAzureMonitorAgainstRealPrometheus(t *testing.T) {
	promBins := prometheusBins(t)
	ctx, cancel := context.WithTimeout(context.Background(), azureMonitorBudget)
	defer cancel()
	rig := monitortest.New(t)
	busy, calm := rig.AddResource(monitortest.SignalR, "chat-busy"), rig.AddResource(monitortest.SignalR, "chat-calm")
	serveUsage(rig, busy, 75, 850)
	serveUsage(rig, calm, 45, 300)
	root := repoRoot(t)
	hp := startHubprobeWith(ctx, t, root, azureMonitorConfig(rig, busy, calm), azureMonitorEnv(rig))
	proms := startPrometheuses(ctx, t, promBins, filepath.Join(root, "alerts", "hubprobe-rules.yml"), hp.addr)
	inEachMode(t, "azure monitor", proms, func(t *testing.T, m modePrometheus) {
		checkDashboardQueries(ctx, t, m.prom, readsAzureMonitor)
		checkRecordingRulesReturnData(ctx, t, m.prom, readsAzureMonitor)
		waitPending(ctx, t, m.prom, alerts.AlertServerLoadHigh, map[string]string{"target": "busy"})
		waitPending(ctx, t, m.prom, alerts.AlertTierHeadroomLow, map[string]string{"target": "busy", "resource": "connections"})
		checkQuiet(ctx, t, m.prom, "calm", map[string]string{
			"target:hubprobe_server_load:ratio":                              "0.45",
			`target:hubprobe_tier_utilization:ratio{resource="connections"}`: "0.3",
		})
	})
}

// waitPending waits until the alert with these labels is pending or firing.
func waitPending(ctx context.Context, t *testing.T, prom promAPI, name string, labels map[string]string) {
	t.Helper()
	err := eventually(ctx, pendingLimit, func(ctx context.Context) error {
		state, err := alertState(ctx, prom, name, labels)
		if err == nil && state == "" {
			err = fmt.Errorf("%s%v is not pending", name, labels)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkQuiet checks that target's figures reached the records (so the rules
// have seen them) and that neither alert is active for it.
func checkQuiet(ctx context.Context, t *testing.T, prom promAPI, target string, records map[string]string) {
	t.Helper()
	for expr, want := range records {
		selector := fmt.Sprintf(`target=%q`, target)
		if i := strings.Index(expr, "{"); i >= 0 {
			expr = expr[:i+1] + selector + ", " + expr[i+1:]
		} else {
			expr += "{" + selector + "}"
		}
		res, err := prom.query(ctx, expr)
		if err != nil || len(res.Samples) != 1 || res.Samples[0].value() != want {
			t.Errorf("%s = %v (%v), want %s", expr, res.Samples, err, want)
		}
	}
	for _, name := range []string{alerts.AlertServerLoadHigh, alerts.AlertTierHeadroomLow} {
		if state, err := alertState(ctx, prom, name, map[string]string{"target": target}); err != nil || state != "" {
			t.Errorf("%s is %q for target %s (%v), want inactive", name, state, target, err)
		}
	}
}

// alertState is the state of the alert whose labels include these, "" when
// it is not active.
func alertState(ctx context.Context, prom promAPI, name string, labels map[string]string) (string, error) {
	all, err := prom.alerts(ctx)
	if err != nil {
		return "", err
	}
	for _, a := range all {
		match := a.Labels["alertname"] == name
		for k, v := range labels {
			match = match && a.Labels[k] == v
		}
		if match {
			return a.State, nil
		}
	}
	return "", nil
}
