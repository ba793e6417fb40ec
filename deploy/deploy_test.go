// Package deploy holds no Go code: its tests render the Kubernetes manifests
// (kubectl's built-in kustomize, the Helm chart), decode every object into
// the types that will read it, and check what a cluster would receive; they
// also build the container image and check what it runs.
package deploy

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
)

const (
	base    = "base"
	overlay = "overlays/kube-prometheus-stack"
	// selfHostedOverlay adds the example self-hosted binding to overlay.
	selfHostedOverlay = "overlays/self-hosted-server-load"
	webPort           = 9754
	// secretName is the Secret the shipped config reads its token from; the
	// user creates it, no rendering may contain it.
	secretName = "hubprobe-credentials"
	configDir  = "/etc/hubprobe"
)

// renderings is every way the repository deploys hubprobe, each rendered
// and decoded strictly.
func renderings(t *testing.T) []manifest {
	t.Helper()
	return []manifest{
		kustomize(t, base),
		kustomize(t, overlay),
		kustomize(t, selfHostedOverlay),
		helmTemplate(t, "helm unsharded"),
		helmTemplate(t, "helm sharded", "--set", "shards=3"),
		helmTemplate(t, "helm self-hosted server load", selfHostedValues(t, helmBindings)...),
	}
}

// kustomize renders dir with `kubectl kustomize`.
func kustomize(t *testing.T, dir string) manifest {
	t.Helper()
	return decodeManifest(t, "kustomize "+dir, run(t, nil, kubectl(t), "kustomize", dir))
}

// Every rendering must pass every check: what one ships, the others do.
func TestEveryRendering(t *testing.T) {
	checks := []struct {
		name  string
		check func(*testing.T, manifest)
	}{
		{"objects", checkObjects},
		{"hardened", checkHardened},
		{"serves and loads its config", checkServesAndLoadsItsConfig},
		{"config parses with the Secret mounted", checkConfigParsesWithTheSecretMounted},
		{"service account", checkServiceAccount},
		{"services and monitor select the pods", checkSelectors},
		{"rules and dashboards", checkRulesAndDashboards},
	}
	for _, m := range renderings(t) {
		t.Run(m.name, func(t *testing.T) {
			for _, c := range checks {
				t.Run(c.name, func(t *testing.T) { c.check(t, m) })
			}
		})
	}
}

func checkObjects(t *testing.T, m manifest) {
	m.pod(t)
	only[corev1.ServiceAccount](t, m)
	only[monitoringv1.PodMonitor](t, m)
	shippedRules(t, m)
	if n := len(ofType[monitoringv1.PrometheusRule](m)); n != 1 && (n != 2 || selfHostedRules(m) == nil) {
		t.Errorf("%d PrometheusRules, want the shipped rules and at most the self-hosted bindings'", n)
	}
	if len(ofType[corev1.Service](m)) == 0 {
		t.Error("no Service")
	}
	if n := len(ofType[corev1.ConfigMap](m)); n != 2 {
		t.Errorf("%d ConfigMaps, want the config and the dashboards", n)
	}
	if n := len(ofType[corev1.Secret](m)); n != 0 {
		t.Errorf("%d Secrets; a real token must never be overwritten by an example", n)
	}
}

func checkHardened(t *testing.T, m manifest) {
	pod, _ := m.pod(t)
	c := container(t, pod)
	sc := c.SecurityContext
	if sc == nil || !isTrue(sc.ReadOnlyRootFilesystem) || !isTrue(sc.RunAsNonRoot) || !isFalse(sc.AllowPrivilegeEscalation) ||
		sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("container securityContext is not hardened: %+v", sc)
	}
	psc := pod.Spec.SecurityContext
	if psc == nil || !isTrue(psc.RunAsNonRoot) || psc.RunAsUser == nil {
		t.Fatalf("pod securityContext must run as a numeric non-root user: %+v", psc)
	}
	if uid := imageUID(t); *psc.RunAsUser != uid {
		t.Errorf("the pod runs as UID %d, the image as %d", *psc.RunAsUser, uid)
	}
	if !isFalse(pod.Spec.AutomountServiceAccountToken) {
		t.Error("the pod mounts a service account token it does not need")
	}
	requests := c.Resources.Requests
	if !requests.Cpu().Equal(resource.MustParse("100m")) || !requests.Memory().Equal(resource.MustParse("64Mi")) ||
		c.Resources.Limits.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources = %+v, want requests of 100m CPU and 64Mi, and cpu and memory limits", c.Resources)
	}
}

// imageUID is the numeric user the Dockerfile's image runs as, which the ko
// image test holds the ko image to.
func imageUID(t *testing.T) int64 {
	t.Helper()
	uid, _, _ := strings.Cut(readDockerfile(t).user, ":")
	n, err := strconv.ParseInt(uid, 10, 64)
	if err != nil || n == 0 {
		t.Fatalf("the Dockerfile's USER %q is not a numeric non-root UID", readDockerfile(t).user)
	}
	return n
}

func checkServesAndLoadsItsConfig(t *testing.T, m manifest) {
	pod, _ := m.pod(t)
	c := container(t, pod)
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != webPort || c.Ports[0].Name != "web" {
		t.Fatalf("ports = %+v, want web on %d", c.Ports, webPort)
	}
	for name, p := range map[string]*corev1.Probe{"/-/healthy": c.LivenessProbe, "/-/ready": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != name || p.HTTPGet.Port.String() != "web" {
			t.Errorf("probe = %+v, want GET %s on web", p, name)
		}
	}
	if len(c.Args) == 0 || c.Args[0] != "--config.file="+configDir+"/hubprobe.yml" {
		t.Errorf("args = %v, want --config.file=%s/hubprobe.yml first", c.Args, configDir)
	}
	if _, ok := mountedConfig(t, m).Data["hubprobe.yml"]; !ok {
		t.Errorf("the ConfigMap mounted at %s has no hubprobe.yml", configDir)
	}
}

// mountedConfig is the ConfigMap mounted read-only at configDir.
func mountedConfig(t *testing.T, m manifest) *corev1.ConfigMap {
	t.Helper()
	pod, _ := m.pod(t)
	v := volumeAt(t, pod, configDir)
	if v.ConfigMap == nil {
		t.Fatalf("%s is not a ConfigMap volume", configDir)
	}
	cm := named[corev1.ConfigMap](m, v.ConfigMap.Name)
	if cm == nil {
		t.Fatalf("the pod mounts ConfigMap %s, which is not rendered", v.ConfigMap.Name)
	}
	return cm
}

// volumeAt is the volume mounted read-only at path in the pod's container.
func volumeAt(t *testing.T, pod *corev1.PodTemplateSpec, path string) corev1.Volume {
	t.Helper()
	for _, mount := range container(t, pod).VolumeMounts {
		if mount.MountPath != path || !mount.ReadOnly {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.Name == mount.Name {
				return v
			}
		}
	}
	t.Fatalf("nothing is mounted read-only at %s", path)
	return corev1.Volume{}
}

// secretMount returns where the Secret named name is mounted read-only.
func secretMount(t *testing.T, pod *corev1.PodTemplateSpec, name string) string {
	t.Helper()
	for _, v := range pod.Spec.Volumes {
		if v.Secret == nil || v.Secret.SecretName != name {
			continue
		}
		for _, mount := range container(t, pod).VolumeMounts {
			if mount.Name == v.Name && mount.ReadOnly {
				return mount.MountPath
			}
		}
	}
	t.Fatalf("the %s Secret is not mounted read-only", name)
	return ""
}

// The config that ships must be one hubprobe accepts, with its token read
// from the Secret's mount path.
func checkConfigParsesWithTheSecretMounted(t *testing.T, m manifest) {
	yml := mountedConfig(t, m).Data["hubprobe.yml"]
	if strings.Contains(yml, "${") {
		t.Error("hubprobe.yml uses ${...}: the pod sets no such environment; use access_token_file")
	}
	pod, _ := m.pod(t)
	tokenPath := secretMount(t, pod, secretName) + "/access-token"
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

func checkServiceAccount(t *testing.T, m manifest) {
	sa := only[corev1.ServiceAccount](t, m)
	pod, _ := m.pod(t)
	if pod.Spec.ServiceAccountName != sa.Name {
		t.Errorf("the pod runs as service account %q, the rendered one is %q", pod.Spec.ServiceAccountName, sa.Name)
	}
	if !isFalse(sa.AutomountServiceAccountToken) {
		t.Error("the ServiceAccount lets pods mount a token hubprobe does not need")
	}
}

func checkSelectors(t *testing.T, m manifest) {
	pod, workloadSelector := m.pod(t)
	selectors := map[string]map[string]string{"the workload": workloadSelector}
	for _, svc := range ofType[corev1.Service](m) {
		selectors["Service "+svc.Name] = svc.Spec.Selector
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "web" {
			t.Errorf("Service %s ports = %+v, want one to the web port", svc.Name, svc.Spec.Ports)
		}
	}
	pm := only[monitoringv1.PodMonitor](t, m)
	selectors["the PodMonitor"] = pm.Spec.Selector.MatchLabels
	for name, sel := range selectors {
		if len(sel) == 0 {
			t.Errorf("%s has an empty selector", name)
		}
		for k, v := range sel {
			if pod.Labels[k] != v {
				t.Errorf("%s selects %s=%s, the pod has %q", name, k, v, pod.Labels[k])
			}
		}
	}
	eps := pm.Spec.PodMetricsEndpoints
	if len(eps) != 1 || eps[0].Port == nil || *eps[0].Port != "web" || eps[0].Path != "/metrics" {
		t.Errorf("podMetricsEndpoints = %+v, want port web, path /metrics", eps)
	}
}

// What a cluster gets must carry exactly the rules file's groups and the
// committed dashboards.
func checkRulesAndDashboards(t *testing.T, m manifest) {
	var rulesFile monitoringv1.PrometheusRuleSpec
	data, err := os.ReadFile("../alerts/hubprobe-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, &rulesFile); err != nil {
		t.Fatalf("alerts/hubprobe-rules.yml is no PrometheusRule spec: %v", err)
	}
	rule := shippedRules(t, m)
	if len(rulesFile.Groups) == 0 || !reflect.DeepEqual(rule.Spec, rulesFile) {
		t.Error("the rendered PrometheusRule's spec differs from alerts/hubprobe-rules.yml")
	}
	var dashboards []*corev1.ConfigMap
	for _, cm := range ofType[corev1.ConfigMap](m) {
		if cm.Labels["grafana_dashboard"] == "1" {
			dashboards = append(dashboards, cm)
		}
	}
	if len(dashboards) != 1 {
		t.Fatalf(`%d ConfigMaps labelled grafana_dashboard: "1", want 1`, len(dashboards))
	}
	files, _ := filepath.Glob("../grafana/dashboards/*.json")
	if len(files) == 0 || len(dashboards[0].Data) != len(files) {
		t.Fatalf("the dashboards ConfigMap has %d entries, grafana/dashboards has %d files", len(dashboards[0].Data), len(files))
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if dashboards[0].Data[filepath.Base(f)] != string(want) {
			t.Errorf("the dashboards ConfigMap's %s differs from %s", filepath.Base(f), f)
		}
	}
}

func TestKubePrometheusStackOverlayAddsTheReleaseLabel(t *testing.T) {
	for _, dir := range []string{overlay, selfHostedOverlay} {
		t.Run(dir, func(t *testing.T) { checkReleaseLabel(t, kustomize(t, dir)) })
	}
}

func checkReleaseLabel(t *testing.T, m manifest) {
	for _, o := range m.objects {
		obj, err := meta.Accessor(o)
		if err != nil {
			t.Fatal(err)
		}
		kind := o.GetObjectKind().GroupVersionKind().Kind
		if obj.GetNamespace() != "monitoring" {
			t.Errorf("%s %s is in namespace %q, want monitoring", kind, obj.GetName(), obj.GetNamespace())
		}
		selected := kind == "PodMonitor" || kind == "PrometheusRule"
		if got := obj.GetLabels()["release"]; selected && got != "kube-prometheus-stack" {
			t.Errorf("%s has release=%q, want kube-prometheus-stack or Prometheus ignores it", kind, got)
		}
	}
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }
