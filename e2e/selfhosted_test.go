package e2e

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hubprobe/hubprobe/alerts"
)

// The self-hosted test normally takes about 15 s: Prometheus starts, scrapes
// the loopback cluster every second and has full 10 s rates soon after.
const (
	selfHostedBudget = time.Minute
	selfHostedLimit  = 30 * time.Second
	// loadTolerance allows for the milliseconds between a scrape's
	// timestamp and the moment the loopback cluster computes its counters.
	loadTolerance = 0.01
)

// cpuContainer is one container of the loopback cluster: the cores it
// uses, and its CPU limit (0: none).
type cpuContainer struct {
	namespace, pod, container string
	cores, limit              float64
}

// loopbackCluster is what a kubelet's cAdvisor and kube-state-metrics
// expose for five containers, with no kubernetes-mixin to record from them.
var loopbackCluster = []cpuContainer{
	{"web", "signalr-app-7c9d-a", "app", 0.75, 1},  // app: 75 % of its limit, the busiest
	{"web", "signalr-app-7c9d-a", "proxy", 0.5, 0}, // a sidecar without a limit
	{"web", "signalr-app-7c9d-b", "app", 3, 0},     // a pod without a CPU limit
	{"web", "redis-0", "redis", 0.99, 1},           // not an app server pod
	{"probe-control", "control-0", "hub", 0.9, 2},  // control: 45 %
}

// selfHostedBindings bind the two targets to their pods in loopbackCluster.
var selfHostedBindings = []alerts.SelfHostedBinding{
	alerts.ExampleSelfHostedBinding,
	{Target: "control", Namespace: "probe-control", Pod: "control-.*"},
}

// TestSelfHostedServerLoadOnRealPrometheus runs the shipped rules and two
// self-hosted bindings on a real Prometheus scraping cAdvisor- and
// kube-state-metrics-shaped series: each target's server load is recorded
// from its busiest limited container, and HubprobeServerLoadHigh goes
// pending at 75 % and not at 45 %.
func TestSelfHostedServerLoadOnRealPrometheus(t *testing.T) {
	promBin := prometheusBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), selfHostedBudget)
	defer cancel()
	cluster := serveCluster(t, loopbackCluster)
	cfg := prometheusConfig(writeSelfHostedRules(t), scrapeJob("cluster", []string{cluster}))
	prom := startPrometheus(ctx, t, promBin, "prometheus-self-hosted", cfg)
	if err := eventually(ctx, selfHostedLimit, func(ctx context.Context) error {
		return checkServerLoads(ctx, prom, map[string]float64{"app": 0.75, "control": 0.45})
	}); err != nil {
		t.Fatal(err)
	}
	if err := eventually(ctx, selfHostedLimit, func(ctx context.Context) error {
		return checkServerLoadPending(ctx, prom, "app")
	}); err != nil {
		t.Fatal(err)
	}
}

// serveCluster serves containers' series on loopback and returns its
// address. Each CPU counter grows at exactly its cores from the start.
func serveCluster(t *testing.T, containers []cpuContainer) string {
	t.Helper()
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elapsed := time.Since(start).Seconds()
		var b strings.Builder
		b.WriteString("# TYPE container_cpu_usage_seconds_total counter\n")
		for _, c := range containers {
			fmt.Fprintf(&b, "container_cpu_usage_seconds_total{%s,image=\"registry.example/%s:1\",id=\"/kubepods/%s/%s\"} %g\n",
				c.labels(), c.container, c.pod, c.container, c.cores*elapsed)
		}
		b.WriteString("# TYPE kube_pod_container_resource_limits gauge\n")
		for _, c := range containers {
			fmt.Fprintf(&b, "kube_pod_container_resource_limits{%s,node=\"n1\",resource=\"memory\",unit=\"byte\"} 268435456\n", c.labels())
			if c.limit > 0 {
				fmt.Fprintf(&b, "kube_pod_container_resource_limits{%s,node=\"n1\",resource=\"cpu\",unit=\"core\"} %g\n", c.labels(), c.limit)
			}
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func (c cpuContainer) labels() string {
	return fmt.Sprintf("namespace=%q,pod=%q,container=%q", c.namespace, c.pod, c.container)
}

// writeSelfHostedRules writes the shipped groups and the bindings' group
// into one rules file, with rates over 10 s: a rate over the shipped 5 m
// window reaches the counters' slope only once 5 m of samples exist.
func writeSelfHostedRules(t *testing.T) string {
	t.Helper()
	cfg := alerts.DefaultConfig
	cfg.RateWindow = "10s"
	selfHosted, err := cfg.SelfHostedGroup(selfHostedBindings)
	if err != nil {
		t.Fatal(err)
	}
	groups := alerts.Groups(cfg)
	groups.Groups = append(groups.Groups, selfHosted)
	data, err := yaml.Marshal(groups)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkServerLoads wants exactly the given targets' server loads recorded.
func checkServerLoads(ctx context.Context, prom promAPI, want map[string]float64) error {
	res, err := prom.query(ctx, alerts.ServerLoadRecord)
	if err != nil {
		return err
	}
	got := map[string]float64{}
	for _, s := range res.Samples {
		got[s.Metric["target"]], err = strconv.ParseFloat(s.value(), 64)
		if err != nil {
			return err
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("%s records %v, want %v", alerts.ServerLoadRecord, got, want)
	}
	for target, w := range want {
		if v, ok := got[target]; !ok || math.Abs(v-w) > loadTolerance {
			return fmt.Errorf("%s records %v, want %v (±%g)", alerts.ServerLoadRecord, got, want, loadTolerance)
		}
	}
	return nil
}

// checkServerLoadPending wants HubprobeServerLoadHigh pending for target
// and for no other.
func checkServerLoadPending(ctx context.Context, prom promAPI, target string) error {
	active, err := prom.alerts(ctx)
	if err != nil {
		return err
	}
	var found []string
	for _, a := range active {
		if a.Labels["alertname"] == alerts.AlertServerLoadHigh {
			found = append(found, a.Labels["target"]+" "+a.State)
		}
	}
	if len(found) != 1 || found[0] != target+" pending" {
		return fmt.Errorf("%s is %v, want [%s pending]", alerts.AlertServerLoadHigh, found, target)
	}
	return nil
}
