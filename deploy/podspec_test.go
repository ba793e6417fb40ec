package deploy

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// podSpecView is the part of a Deployment's pod template the tests check,
// decoded with the field names Kubernetes uses.
type podSpecView struct {
	AutomountServiceAccountToken *bool `yaml:"automountServiceAccountToken"`
	SecurityContext              struct {
		RunAsNonRoot bool  `yaml:"runAsNonRoot"`
		RunAsUser    int64 `yaml:"runAsUser"`
	} `yaml:"securityContext"`
	Containers []containerView `yaml:"containers"`
	Volumes    []struct {
		Name      string `yaml:"name"`
		ConfigMap *struct {
			Name string `yaml:"name"`
		} `yaml:"configMap"`
		Secret *struct {
			SecretName string `yaml:"secretName"`
		} `yaml:"secret"`
	} `yaml:"volumes"`
}

type containerView struct {
	Args  []string `yaml:"args"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	LivenessProbe   probeView `yaml:"livenessProbe"`
	ReadinessProbe  probeView `yaml:"readinessProbe"`
	Resources       resources `yaml:"resources"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
		RunAsNonRoot             bool  `yaml:"runAsNonRoot"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

type probeView struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
}

type resources struct {
	Requests map[string]string `yaml:"requests"`
	Limits   map[string]string `yaml:"limits"`
}

func podSpec(t *testing.T, deployment object) podSpecView {
	t.Helper()
	spec := nested[map[string]any](t, deployment.raw, "spec", "template", "spec")
	data, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var pod podSpecView
	if err := yaml.Unmarshal(data, &pod); err != nil {
		t.Fatal(err)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("the pod has %d containers, want 1", len(pod.Containers))
	}
	return pod
}

// configMapVolume returns the name of the ConfigMap mounted read-only at path.
func configMapVolume(t *testing.T, pod podSpecView, c containerView, path string) string {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.MountPath != path {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && m.ReadOnly {
				return v.ConfigMap.Name
			}
		}
	}
	t.Fatalf("no ConfigMap is mounted read-only at %s", path)
	return ""
}

// secretMount returns where the hubprobe-credentials Secret is mounted.
func secretMount(t *testing.T, pod podSpecView) string {
	t.Helper()
	for _, v := range pod.Volumes {
		if v.Secret == nil || v.Secret.SecretName != "hubprobe-credentials" {
			continue
		}
		for _, m := range pod.Containers[0].VolumeMounts {
			if m.Name == v.Name && m.ReadOnly {
				return m.MountPath
			}
		}
	}
	t.Fatal("the hubprobe-credentials Secret is not mounted read-only")
	return ""
}
