package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// strict decodes YAML into the Go types the API server and the Prometheus
// Operator read: an unknown or duplicate field, or a kind none of them
// serves, is an error rather than something a cluster would drop silently.
var strict = json.NewSerializerWithOptions(json.DefaultMetaFactory, manifestScheme(), manifestScheme(),
	json.SerializerOptions{Yaml: true, Strict: true})

func manifestScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(appsv1.AddToScheme(s))
	utilruntime.Must(monitoringv1.AddToScheme(s))
	return s
}

// manifest is one rendering of the deployment files, every object typed.
type manifest struct {
	name    string
	objects []runtime.Object
}

// decodeManifest decodes every document of a rendered YAML stream strictly.
func decodeManifest(t *testing.T, name string, out []byte) manifest {
	t.Helper()
	m := manifest{name: name}
	reader := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return m
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if empty(t, doc) {
			continue
		}
		obj, err := decodeStrict(doc)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, doc)
		}
		m.objects = append(m.objects, obj)
	}
}

func decodeStrict(doc []byte) (runtime.Object, error) {
	obj, _, err := strict.Decode(doc, nil, nil)
	return obj, err
}

// empty reports a document holding nothing but comments, as Helm prints for
// a template whose object is switched off.
func empty(t *testing.T, doc []byte) bool {
	t.Helper()
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(j) == "null"
}

// ofType returns the objects of type T.
func ofType[T any](m manifest) []*T {
	var found []*T
	for _, o := range m.objects {
		if typed, ok := any(o).(*T); ok {
			found = append(found, typed)
		}
	}
	return found
}

// only returns the one object of type T, failing when there are more or none.
func only[T any](t *testing.T, m manifest) *T {
	t.Helper()
	found := ofType[T](m)
	if len(found) != 1 {
		var zero T
		t.Fatalf("%s renders %d objects of type %T, want 1", m.name, len(found), zero)
	}
	return found[0]
}

// pod is the pod template of the one workload, a Deployment or a
// StatefulSet, and the labels it selects its pods by.
func (m manifest) pod(t *testing.T) (*corev1.PodTemplateSpec, map[string]string) {
	t.Helper()
	deployments, sets := ofType[appsv1.Deployment](m), ofType[appsv1.StatefulSet](m)
	if len(deployments)+len(sets) != 1 {
		t.Fatalf("%s renders %d Deployments and %d StatefulSets, want one workload", m.name, len(deployments), len(sets))
	}
	if len(deployments) == 1 {
		return &deployments[0].Spec.Template, deployments[0].Spec.Selector.MatchLabels
	}
	return &sets[0].Spec.Template, sets[0].Spec.Selector.MatchLabels
}

// container is the pod's one container.
func container(t *testing.T, pod *corev1.PodTemplateSpec) *corev1.Container {
	t.Helper()
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("the pod has %d containers, want 1", len(pod.Spec.Containers))
	}
	return &pod.Spec.Containers[0]
}

// named returns the object of type T called name, or nil.
func named[T any](m manifest, name string) *T {
	for _, o := range ofType[T](m) {
		if obj, ok := any(o).(metav1.Object); ok && obj.GetName() == name {
			return o
		}
	}
	return nil
}

// The checks below are only worth something if the decoder really refuses
// what a cluster would not understand.
func TestStrictDecodingRejectsWhatAClusterWouldDrop(t *testing.T) {
	for name, doc := range map[string]string{
		"misspelt field":   "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replica: 1}\n",
		"duplicate field":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\ndata: {c: d}\n",
		"wrong case":       "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {clusterIp: None}\n",
		"unknown kind":     "apiVersion: apps/v1\nkind: DaemonSett\nmetadata: {name: x}\n",
		"operator field":   "apiVersion: monitoring.coreos.com/v1\nkind: PodMonitor\nmetadata: {name: x}\nspec: {podMetricEndpoints: []}\n",
		"rule field":       "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: {name: x}\nspec: {groups: [{name: g, rules: [{alert: A, expr: up, fire: 1m}]}]}\n",
		"field as integer": "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: web}]}\n",
	} {
		if _, err := decodeStrict([]byte(doc)); err == nil {
			t.Errorf("%s: decoded without an error:\n%s", name, doc)
		}
	}
	obj, err := decodeStrict([]byte("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec: {replicas: 3}\n"))
	if set, ok := obj.(*appsv1.StatefulSet); err != nil || !ok || *set.Spec.Replicas != 3 {
		t.Errorf("a valid StatefulSet decoded to %#v, %v", obj, err)
	}
}

// The API types are for these tests only: the hubprobe binary must not grow
// by the Kubernetes and Prometheus Operator packages.
func TestHubprobeBinaryLeavesOutTheAPITypes(t *testing.T) {
	out := run(t, nil, "go", "list", "-deps", "github.com/hubprobe/hubprobe/cmd/hubprobe")
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/") || strings.HasPrefix(pkg, "sigs.k8s.io/") ||
			strings.HasPrefix(pkg, "github.com/prometheus-operator/") {
			t.Errorf("cmd/hubprobe imports %s", pkg)
		}
	}
}
