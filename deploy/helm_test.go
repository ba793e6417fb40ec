package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

const (
	chart   = "helm/hubprobe"
	release = "hubprobe"
	// shardIndexField is the downward-API path of the label the StatefulSet
	// controller numbers its pods with.
	shardIndexField = "metadata.labels['apps.kubernetes.io/pod-index']"
)

// kubeVersion is the Kubernetes release whose API types decode the output,
// from the k8s.io/api module go.mod requires (v0.N.p serves Kubernetes
// 1.N.p). Helm built with go install assumes 1.20 otherwise, below the
// chart's kubeVersion.
var kubeVersion = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/api").Output()
	v := strings.TrimSpace(string(out))
	if err != nil || !strings.HasPrefix(v, "v0.") {
		return "", fmt.Errorf("go list -m k8s.io/api: %q, %v", v, err)
	}
	return "v1." + strings.TrimPrefix(v, "v0."), nil
})

// helmTemplate renders the chart with `helm template` and extra arguments
// (--set …) and decodes it strictly.
func helmTemplate(t *testing.T, name string, args ...string) manifest {
	t.Helper()
	out, stderr, err := helmTemplateResult(t, args...)
	if err != nil {
		t.Fatalf("helm template %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return decodeManifest(t, name, out)
}

func helmTemplateResult(t *testing.T, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	version, err := kubeVersion()
	if err != nil {
		t.Fatal(err)
	}
	all := append([]string{"template", release, chart, "--kube-version", version}, args...)
	return runResult(nil, goTool(t, "helm"), all...)
}

func TestHelmLint(t *testing.T) {
	helm := goTool(t, "helm")
	for _, args := range [][]string{nil, {"--set", "shards=3"}, selfHostedValues(t, helmBindings)} {
		out := run(t, nil, helm, append([]string{"lint", "--strict", chart}, args...)...)
		if !strings.Contains(string(out), "0 chart(s) failed") {
			t.Errorf("helm lint %v:\n%s", args, out)
		}
	}
}

func TestHelmUnshardedIsOneDeployment(t *testing.T) {
	m := helmTemplate(t, "helm unsharded")
	d := only[appsv1.Deployment](t, m)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("Deployment replicas %v, strategy %q; want 1 replica, Recreate, so that two pods never probe at once",
			d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	if n := len(ofType[appsv1.StatefulSet](m)); n != 0 {
		t.Errorf("%d StatefulSets without sharding", n)
	}
	for _, e := range container(t, &d.Spec.Template).Env {
		if strings.HasPrefix(e.Name, "HUBPROBE_SHARD_") {
			t.Errorf("unsharded pod sets %s", e.Name)
		}
	}
}

func TestHelmShardsAreAStatefulSetNumberedByPodIndex(t *testing.T) {
	m := helmTemplate(t, "helm sharded", "--set", "shards=3")
	if n := len(ofType[appsv1.Deployment](m)); n != 0 {
		t.Errorf("%d Deployments when sharded", n)
	}
	set := only[appsv1.StatefulSet](t, m)
	if set.Spec.Replicas == nil || *set.Spec.Replicas != 3 || set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("StatefulSet replicas %v, pod management %q; want 3 started in parallel", set.Spec.Replicas, set.Spec.PodManagementPolicy)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range container(t, &set.Spec.Template).Env {
		env[e.Name] = e
	}
	index := env["HUBPROBE_SHARD_INDEX"].ValueFrom
	if index == nil || index.FieldRef == nil || index.FieldRef.FieldPath != shardIndexField {
		t.Errorf("HUBPROBE_SHARD_INDEX comes from %+v, want the downward API field %s", index, shardIndexField)
	}
	if count := env["HUBPROBE_SHARD_COUNT"]; count.Value != "3" || count.ValueFrom != nil {
		t.Errorf("HUBPROBE_SHARD_COUNT = %+v, want the value 3", count)
	}
	governing := named[corev1.Service](m, set.Spec.ServiceName)
	if governing == nil || governing.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("the StatefulSet's service %q is not a rendered headless Service", set.Spec.ServiceName)
	}
}

// The chart's default config is the kustomize base's, comments aside: the
// two ways to deploy probe the same scenarios.
func TestHelmDefaultConfigIsTheBaseConfig(t *testing.T) {
	var chartValues struct {
		Config string `json:"config"`
	}
	readYAML(t, filepath.Join(chart, "values.yaml"), &chartValues)
	var fromChart, fromBase any
	if err := yaml.Unmarshal([]byte(chartValues.Config), &fromChart); err != nil {
		t.Fatalf("values.yaml config: %v", err)
	}
	readYAML(t, filepath.Join(base, "hubprobe.yml"), &fromBase)
	if fromChart == nil || !reflect.DeepEqual(fromChart, fromBase) {
		t.Errorf("the chart's default config differs from %s/hubprobe.yml", base)
	}
}

// The values a user sets reach the objects, and secrets stay references.
func TestHelmValuesReachTheObjects(t *testing.T) {
	m := helmTemplate(t, "helm with values",
		"--set", "existingSecret=probe-creds",
		"--set", "secretEnv[0].name=HUBPROBE_SIGNALR_CONNECTION_STRING,secretEnv[0].key=connection-string",
		"--set", "podMonitor.labels.release=kube-prometheus-stack",
		"--set", "prometheusRule.labels.release=kube-prometheus-stack",
		"--set", "dashboards.namespace=monitoring",
		"--set", "resources.limits.cpu=2",
		"--set", "image.digest=sha256:"+strings.Repeat("ab", 32))
	pod, _ := m.pod(t)
	secretMount(t, pod, "probe-creds")
	c := container(t, pod)
	var ref *corev1.SecretKeySelector
	for _, e := range c.Env {
		if e.Name == "HUBPROBE_SIGNALR_CONNECTION_STRING" && e.Value == "" && e.ValueFrom != nil {
			ref = e.ValueFrom.SecretKeyRef
		}
	}
	if ref == nil || ref.Name != "probe-creds" || ref.Key != "connection-string" {
		t.Errorf("secretEnv is not read from key connection-string of probe-creds: %+v", c.Env)
	}
	for _, labels := range []map[string]string{only[monitoringv1.PodMonitor](t, m).Labels, only[monitoringv1.PrometheusRule](t, m).Labels} {
		if labels["release"] != "kube-prometheus-stack" {
			t.Errorf("labels %v lack release=kube-prometheus-stack", labels)
		}
	}
	if dash := named[corev1.ConfigMap](m, release+"-dashboards"); dash == nil || dash.Namespace != "monitoring" {
		t.Errorf("the dashboards ConfigMap is not in namespace monitoring: %+v", dash)
	}
	if !c.Resources.Limits.Cpu().Equal(resource.MustParse("2")) {
		t.Errorf("CPU limit = %v, want 2", c.Resources.Limits.Cpu())
	}
	if want := "ghcr.io/hubprobe/hubprobe@sha256:" + strings.Repeat("ab", 32); c.Image != want {
		t.Errorf("image = %s, want %s", c.Image, want)
	}
}

// A changed config rolls the pods: their template carries its checksum.
func TestHelmConfigChangeRollsThePods(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hubprobe.yml")
	if err := os.WriteFile(file, []byte("targets:\n  - name: control\n    embedded: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	checksum := func(m manifest) string {
		pod, _ := m.pod(t)
		return pod.Annotations["checksum/config"]
	}
	before, after := checksum(helmTemplate(t, "helm default")), checksum(helmTemplate(t, "helm own config", "--set-file", "config="+file))
	if before == "" || before == after {
		t.Errorf("checksum/config is %q before and %q after a config change", before, after)
	}
}

// The values schema refuses what would render a broken deployment.
func TestHelmRejectsBadValues(t *testing.T) {
	for want, args := range map[string][]string{
		"/shards":                        {"--set", "shards=0"},
		"'shard' not allowed":            {"--set", "shard=3"},
		"secretEnv needs existingSecret": {"--set", "existingSecret=", "--set", "secretEnv[0].name=A,secretEnv[0].key=b"},
		`selfHostedServerLoad[1].target: "hub" is not the name of a target in config`: {"--set-json",
			`selfHostedServerLoad=[{"target":"app","namespace":"web","pod":"a"},{"target":"hub","namespace":"web","pod":"b"}]`},
		`selfHostedServerLoad[1].target: "app" is bound twice`: {"--set-json",
			`selfHostedServerLoad=[{"target":"app","namespace":"web","pod":"a"},{"target":"app","namespace":"web","pod":"b"}]`},
		"missing closing ): `app-(x`":       {"--set-json", `selfHostedServerLoad=[{"target":"app","namespace":"web","pod":"app-(x"}]`},
		"/selfHostedServerLoad/0/namespace": {"--set-json", `selfHostedServerLoad=[{"target":"app","namespace":"Web","pod":"a"}]`},
		"missing property 'pod'":            {"--set-json", `selfHostedServerLoad=[{"target":"app","namespace":"web"}]`},
		"additional properties 'contaner' not allowed": {"--set-json",
			`selfHostedServerLoad=[{"target":"app","namespace":"web","pod":"a","contaner":"app"}]`},
	} {
		_, stderr, err := helmTemplateResult(t, args...)
		if err == nil || !strings.Contains(string(stderr), want) {
			t.Errorf("helm template %v: err %v, stderr %q; want a failure naming %q", args, err, stderr, want)
		}
	}
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

// Workload identity annotates the service account with the client ID and
// labels the pods for the webhook, which projects the token file.
func TestHelmWorkloadIdentity(t *testing.T) {
	const clientID = "0b1c2d3e-aaaa-bbbb-cccc-123456789abc"
	m := helmTemplate(t, "helm workload identity",
		"--set", "workloadIdentity.enabled=true", "--set", "workloadIdentity.clientId="+clientID,
		"--set", "serviceAccount.annotations.team=canary")
	pod, _ := m.pod(t)
	sa := named[corev1.ServiceAccount](m, release)
	if sa == nil {
		t.Fatal("no ServiceAccount rendered")
	}
	want := map[string]string{"azure.workload.identity/client-id": clientID, "team": "canary"}
	if !reflect.DeepEqual(sa.Annotations, want) {
		t.Errorf("ServiceAccount annotations %v, want %v", sa.Annotations, want)
	}
	if pod.Labels["azure.workload.identity/use"] != "true" || pod.Spec.ServiceAccountName != release {
		t.Errorf("pod label azure.workload.identity/use=%q, service account %q", pod.Labels["azure.workload.identity/use"], pod.Spec.ServiceAccountName)
	}
	off := helmTemplate(t, "helm default")
	offPod, _ := off.pod(t)
	if _, ok := offPod.Labels["azure.workload.identity/use"]; ok || len(named[corev1.ServiceAccount](off, release).Annotations) != 0 {
		t.Error("workload identity is on by default")
	}
	if _, stderr, err := helmTemplateResult(t, "--set", "workloadIdentity.enabled=true"); err == nil || !strings.Contains(string(stderr), "clientId") {
		t.Errorf("workload identity without a client ID rendered: %v %s", err, stderr)
	}
}
