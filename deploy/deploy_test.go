// Package deploy holds no Go code: its test renders the Kubernetes manifests
// with kubectl's built-in kustomize and checks what a cluster would receive.
package deploy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
)

const (
	base    = "base"
	overlay = "overlays/kube-prometheus-stack"
	webPort = 9754
)

// object is the part of a Kubernetes object these tests read.
type object struct {
	APIVersion string         `yaml:"apiVersion"`
	Kind       string         `yaml:"kind"`
	Metadata   metadata       `yaml:"metadata"`
	Spec       map[string]any `yaml:"spec"`
	Data       map[string]string
	raw        map[string]any
}

type metadata struct {
	Name      string            `yaml:"name"`
	Namespace string            `yaml:"namespace"`
	Labels    map[string]string `yaml:"labels"`
}

func TestBaseRenders(t *testing.T) {
	objs := render(t, base)
	for _, kind := range []string{"ServiceAccount", "Deployment", "Service", "ConfigMap", "PodMonitor", "PrometheusRule"} {
		if len(byKind(objs, kind)) == 0 {
			t.Errorf("kubectl kustomize %s renders no %s", base, kind)
		}
	}
	if n := len(byKind(objs, "Secret")); n != 0 {
		t.Errorf("base renders %d Secrets; a real token must never be overwritten by an example", n)
	}
}

func TestDeploymentIsHardened(t *testing.T) {
	pod := podSpec(t, one(t, render(t, base), "Deployment"))
	c := pod.Containers[0]
	sc := c.SecurityContext
	if !sc.ReadOnlyRootFilesystem || !sc.RunAsNonRoot || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		!reflect.DeepEqual(sc.Capabilities.Drop, []string{"ALL"}) {
		t.Errorf("container securityContext is not hardened: %+v", sc)
	}
	if !pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.RunAsUser == 0 {
		t.Errorf("pod securityContext must run as a non-root user: %+v", pod.SecurityContext)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token it does not need")
	}
	want := resources{Requests: map[string]string{"cpu": "100m", "memory": "64Mi"}}
	if !reflect.DeepEqual(c.Resources.Requests, want.Requests) || c.Resources.Limits["memory"] == "" || c.Resources.Limits["cpu"] == "" {
		t.Errorf("resources = %+v, want requests %v and cpu and memory limits", c.Resources, want.Requests)
	}
}

func TestDeploymentServesAndLoadsItsConfig(t *testing.T) {
	objs := render(t, base)
	pod := podSpec(t, one(t, objs, "Deployment"))
	c := pod.Containers[0]
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != webPort || c.Ports[0].Name != "web" {
		t.Fatalf("ports = %+v, want web on %d", c.Ports, webPort)
	}
	if c.LivenessProbe.HTTPGet.Path != "/-/healthy" || c.LivenessProbe.HTTPGet.Port != "web" {
		t.Errorf("liveness probe = %+v, want GET /-/healthy on web", c.LivenessProbe.HTTPGet)
	}
	if c.ReadinessProbe.HTTPGet.Path != "/-/ready" || c.ReadinessProbe.HTTPGet.Port != "web" {
		t.Errorf("readiness probe = %+v, want GET /-/ready on web", c.ReadinessProbe.HTTPGet)
	}
	if !contains(c.Args, "--config.file=/etc/hubprobe/hubprobe.yml") {
		t.Errorf("args = %v, want --config.file=/etc/hubprobe/hubprobe.yml", c.Args)
	}
	cm := configMapVolume(t, pod, c, "/etc/hubprobe")
	if _, ok := findObject(objs, "ConfigMap", cm).Data["hubprobe.yml"]; !ok {
		t.Errorf("the ConfigMap %s mounted at /etc/hubprobe has no hubprobe.yml", cm)
	}
}

// The config that ships must be one hubprobe accepts, with its token read
// from the Secret's mount path.
func TestConfigParsesWithTheSecretMounted(t *testing.T) {
	objs := render(t, base)
	pod := podSpec(t, one(t, objs, "Deployment"))
	yml := findObject(objs, "ConfigMap", configMapVolume(t, pod, pod.Containers[0], "/etc/hubprobe")).Data["hubprobe.yml"]
	if strings.Contains(yml, "${") {
		t.Error("hubprobe.yml uses ${...}: the Deployment sets no such environment; use access_token_file")
	}
	mount := secretMount(t, pod)
	tokenPath := mount + "/access-token"
	if !strings.Contains(yml, "access_token_file: "+tokenPath) {
		t.Fatalf("hubprobe.yml does not read its token from the Secret at %s", tokenPath)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "access-token"), []byte("test-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	local := strings.ReplaceAll(yml, tokenPath, filepath.Join(dir, "access-token"))
	cfg, err := config.Parse([]byte(local), "hubprobe.yml", scenarios.Kinds())
	if err != nil {
		t.Fatalf("hubprobe rejects the shipped config: %v", err)
	}
	app, ok := cfg.Target("app")
	if !ok || string(app.AccessToken) != "test-token" {
		t.Errorf("target app did not read its token from the Secret file")
	}
	if len(cfg.Scenarios) < 3 {
		t.Errorf("the shipped config runs only %d scenarios", len(cfg.Scenarios))
	}
}

func TestServiceAndPodMonitorReachThePod(t *testing.T) {
	objs := render(t, base)
	deploy := one(t, objs, "Deployment")
	podLabels := nested[map[string]any](t, deploy.raw, "spec", "template", "metadata", "labels")
	svcSelector := nested[map[string]any](t, one(t, objs, "Service").raw, "spec", "selector")
	pm := one(t, objs, "PodMonitor")
	pmSelector := nested[map[string]any](t, pm.raw, "spec", "selector", "matchLabels")
	for name, sel := range map[string]map[string]any{"Service": svcSelector, "PodMonitor": pmSelector} {
		if len(sel) == 0 {
			t.Errorf("%s has an empty selector", name)
		}
		for k, v := range sel {
			if podLabels[k] != v {
				t.Errorf("%s selects %s=%v, the pod has %v", name, k, v, podLabels[k])
			}
		}
	}
	endpoints := nested[[]any](t, pm.raw, "spec", "podMetricsEndpoints")
	ep, _ := endpoints[0].(map[string]any)
	if len(endpoints) != 1 || ep["port"] != "web" || ep["path"] != "/metrics" {
		t.Errorf("podMetricsEndpoints = %v, want port web, path /metrics", endpoints)
	}
}

// What kustomize emits must carry exactly the rules file's groups and the
// committed dashboards.
func TestRulesAndDashboardsReachTheCluster(t *testing.T) {
	objs := render(t, base)
	var rulesFile struct {
		Groups []any `yaml:"groups"`
	}
	readYAML(t, "../alerts/hubprobe-rules.yml", &rulesFile)
	rule := one(t, objs, "PrometheusRule")
	if !reflect.DeepEqual(rule.Spec["groups"], any(rulesFile.Groups)) || len(rulesFile.Groups) == 0 {
		t.Error("the rendered PrometheusRule's groups differ from alerts/hubprobe-rules.yml")
	}
	var dashboards *object
	for i, cm := range byKind(objs, "ConfigMap") {
		if cm.Metadata.Labels["grafana_dashboard"] == "1" {
			dashboards = &byKind(objs, "ConfigMap")[i]
		}
	}
	if dashboards == nil {
		t.Fatal(`no ConfigMap labelled grafana_dashboard: "1"`)
	}
	files, _ := filepath.Glob("../grafana/dashboards/*.json")
	if len(files) == 0 || len(dashboards.Data) != len(files) {
		t.Fatalf("the dashboards ConfigMap has %d entries, grafana/dashboards has %d files", len(dashboards.Data), len(files))
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if dashboards.Data[filepath.Base(f)] != string(want) {
			t.Errorf("the dashboards ConfigMap's %s differs from %s", filepath.Base(f), f)
		}
	}
}

func TestKubePrometheusStackOverlayAddsTheReleaseLabel(t *testing.T) {
	for _, o := range render(t, overlay) {
		if o.Metadata.Namespace != "monitoring" {
			t.Errorf("%s %s is in namespace %q, want monitoring", o.Kind, o.Metadata.Name, o.Metadata.Namespace)
		}
		selected := o.Kind == "PodMonitor" || o.Kind == "PrometheusRule"
		if got := o.Metadata.Labels["release"]; selected && got != "kube-prometheus-stack" {
			t.Errorf("%s has release=%q, want kube-prometheus-stack or Prometheus ignores it", o.Kind, got)
		}
	}
}

// render runs `kubectl kustomize dir` and decodes every object it prints.
func render(t *testing.T, dir string) []object {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is not on PATH: install the kubectl package (apt-get install -y kubectl; Debian's own kubernetes-client 1.20 is too old for this kustomization)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, kubectl, "kustomize", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
	}
	return decodeAll(t, out)
}

func decodeAll(t *testing.T, out []byte) []object {
	t.Helper()
	var objs []object
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		var o object
		var raw map[string]any
		var data struct {
			Data map[string]string `yaml:"data"`
		}
		if err := errors.Join(node.Decode(&o), node.Decode(&raw), node.Decode(&data)); err != nil {
			t.Fatal(err)
		}
		o.raw, o.Data = raw, data.Data
		objs = append(objs, o)
	}
}

func byKind(objs []object, kind string) []object {
	var out []object
	for _, o := range objs {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func one(t *testing.T, objs []object, kind string) object {
	t.Helper()
	found := byKind(objs, kind)
	if len(found) != 1 {
		t.Fatalf("rendered %d objects of kind %s, want 1", len(found), kind)
	}
	return found[0]
}

func findObject(objs []object, kind, name string) object {
	for _, o := range byKind(objs, kind) {
		if o.Metadata.Name == name {
			return o
		}
	}
	return object{}
}

func nested[T any](t *testing.T, m map[string]any, path ...string) T {
	t.Helper()
	var cur any = m
	for _, key := range path {
		next, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("no %s in the rendered object", strings.Join(path, "."))
		}
		cur = next[key]
	}
	v, ok := cur.(T)
	if !ok {
		t.Fatalf("%s is %T", strings.Join(path, "."), cur)
	}
	return v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
