package alerts

import (
	"errors"
	"fmt"
	"regexp"
)

// A self-hosted ASP.NET Core app server reports no server load to the probe,
// and no Azure Monitor reads one for it: its server load is its CPU. A
// SelfHostedBinding names the pods that serve one target; its recording
// rule writes ServerLoadRecord for that target as the busiest container's
// CPU rate over its CPU limit, so HubprobeServerLoadHigh works unchanged.
//
// The rule reads what the kubernetes-mixin records (rules/apps.libsonnet of
// kubernetes-monitoring/kubernetes-mixin), and where a series is missing,
// what the mixin records it from: cAdvisor's counter and kube-state-metrics'
// limits. The counter's rate is taken over RateWindow, 5m by default as the
// mixin's. Every side is first reduced to one series per namespace, pod and
// container, so that the sources join whatever else their scrapes label.
const (
	// mixinCPUUsage is the mixin's CPU rate over 5m per container (group
	// k8s.rules.container_cpu_usage_seconds_total, recorded since 2025).
	// Its older sum_irate twin is not read: an instant rate flaps around
	// the threshold and restarts the alert's `for`, and cAdvisor's counter,
	// which it is computed from, is there wherever it is.
	mixinCPUUsage = "node_namespace_pod_container:container_cpu_usage_seconds_total:sum_rate5m"
	// mixinCPULimits are the CPU limits of the containers of pending and
	// running pods (group k8s.rules.container_cpu_limits).
	mixinCPULimits = "cluster:namespace:pod_cpu:active:kube_pod_container_resource_limits"
	// cadvisorCPUUsage is the kubelet's cAdvisor counter of CPU seconds.
	cadvisorCPUUsage = "container_cpu_usage_seconds_total"
	// kubeStateLimits are kube-state-metrics' requests-and-limits series.
	kubeStateLimits = "kube_pod_container_resource_limits"
	// perContainer are the labels every source is reduced to.
	perContainer = "namespace, pod, container"
)

// SelfHostedGroupName is the group the bindings' rules are rendered in.
const SelfHostedGroupName = "hubprobe.self-hosted.rules"

// AnyContainer is the container regex of a binding that names none: every
// container of the pods (the pod's own cgroup, which has no container name,
// is left out).
const AnyContainer = ".+"

// SelfHostedBinding binds a target's server load to the CPU of the pods that
// serve it. Pod and Container are regular expressions, anchored at both ends
// as PromQL anchors them.
type SelfHostedBinding struct {
	// Target is the hubprobe target's name, the label of the record.
	Target string
	// Namespace is the Kubernetes namespace of the app server's pods.
	Namespace string
	// Pod matches the pods' names, e.g. "myhub-.*" for a Deployment myhub.
	Pod string
	// Container matches the containers read; empty: AnyContainer.
	Container string
}

// ExampleSelfHostedBinding is the binding the kustomize overlay and the plain
// rules file ship with: the base config's app target, served by the pods of
// a Deployment signalr-app in namespace web.
var ExampleSelfHostedBinding = SelfHostedBinding{Target: "app", Namespace: "web", Pod: "signalr-app-.*"}

// SelfHostedGroup is the rule group recording the server load of each bound
// target. A target may be bound once: two rules writing one series would
// overwrite each other.
func (cfg Config) SelfHostedGroup(bindings []SelfHostedBinding) (RuleGroup, error) {
	bound := map[string]bool{}
	rules := make([]Rule, 0, len(bindings))
	for i, b := range bindings {
		if err := b.validate(bound); err != nil {
			return RuleGroup{}, fmt.Errorf("self-hosted binding %d: %w", i, err)
		}
		rules = append(rules, cfg.selfHostedRule(b))
	}
	return RuleGroup{Name: SelfHostedGroupName, Rules: rules}, nil
}

func (b SelfHostedBinding) validate(bound map[string]bool) error {
	switch {
	case b.Target == "", b.Namespace == "", b.Pod == "":
		return errors.New("target, namespace and pod must not be empty")
	case bound[b.Target]:
		return fmt.Errorf("target %q is bound twice", b.Target)
	}
	bound[b.Target] = true
	for _, re := range []string{b.Pod, b.Container} {
		if _, err := regexp.Compile(re); err != nil {
			return fmt.Errorf("target %q: %w", b.Target, err)
		}
	}
	return nil
}

func (cfg Config) selfHostedRule(b SelfHostedBinding) Rule {
	return Rule{Record: ServerLoadRecord, Expr: cfg.selfHostedExpr(b), Labels: map[string]string{"target": b.Target}}
}

// selfHostedExpr is the highest CPU rate over CPU limit among the bound
// containers. The busiest one, not the average: a client's connections stay
// on one app server, so one hot pod slows its clients however idle the
// others are; Azure's ServerLoad is read at its maximum too. A container
// without a CPU limit has no limit series, so it gives no ratio rather than
// a division by zero. A target that reports its own load keeps it: the
// binding then records nothing, so two rules never write one series.
func (cfg Config) selfHostedExpr(b SelfHostedBinding) string {
	pods := b.matchers()
	usage := fmt.Sprintf("max by (%s) (%s)\n    or\n    sum by (%s) (rate(%s[%s]))",
		perContainer, vectorSelector(mixinCPUUsage, pods...),
		perContainer, vectorSelector(cadvisorCPUUsage, append(pods, `image!=""`)...), cfg.RateWindow)
	limits := fmt.Sprintf("max by (%s) (%s > 0)\n    or\n    max by (%s) (%s > 0)",
		perContainer, vectorSelector(mixinCPULimits, pods...),
		perContainer, vectorSelector(kubeStateLimits, append(pods, `resource="cpu"`)...))
	return fmt.Sprintf("max (\n  (\n    %s\n  )\n  / on (%s)\n  (\n    %s\n  )\n)\nunless on ()\n  %s",
		usage, perContainer, limits, cfg.selector("hubprobe_server_load_ratio", fmt.Sprintf("target=%q", b.Target)))
}

// matchers select the bound containers, the values quoted as PromQL and
// Helm's quote both quote them.
func (b SelfHostedBinding) matchers() []string {
	container := b.Container
	if container == "" {
		container = AnyContainer
	}
	return []string{fmt.Sprintf("namespace=%q", b.Namespace), fmt.Sprintf("pod=~%q", b.Pod), fmt.Sprintf("container=~%q", container)}
}
