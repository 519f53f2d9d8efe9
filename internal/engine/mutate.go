package engine

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// WebhookIgnoreLabel is the label that keeps a pod (or its namespace) away from HAMi's admission webhook when
// its value is "ignore": the shipped MutatingWebhookConfiguration's selectors, as HAMi's chart.
const WebhookIgnoreLabel = "hami.io/webhook"

// AsksForManaged reports whether a container of the pod (init containers included) names a resource HAMi
// manages in its limits or requests: the pods HAMi's webhook acts on.
func AsksForManaged(pod *corev1.Pod, cfg Config) bool {
	for i := range pod.Spec.InitContainers {
		if ContainerAsks(&pod.Spec.InitContainers[i], cfg) {
			return true
		}
	}
	for i := range pod.Spec.Containers {
		if ContainerAsks(&pod.Spec.Containers[i], cfg) {
			return true
		}
	}
	return false
}

// ContainerAsks reports whether the container names a resource HAMi manages in its limits or requests.
func ContainerAsks(c *corev1.Container, cfg Config) bool {
	for _, name := range cfg.ManagedResources() {
		if _, ok := c.Resources.Limits[corev1.ResourceName(name)]; ok {
			return true
		}
		if _, ok := c.Resources.Requests[corev1.ResourceName(name)]; ok {
			return true
		}
	}
	return false
}

// Mutate is what HAMi's admission webhook changes in a pod it admits, with a line per change: Admit's
// defaults, then, for a pod that asks for a resource HAMi manages and names no scheduler or default-scheduler,
// HAMi's profile (scheduler) as spec.schedulerName. An empty scheduler changes no name. The extender's webhook
// and what-if (NewPod) both use it, so a pod is judged for the scheduler that will see it.
func Mutate(pod *corev1.Pod, cfg Config, scheduler string) (*corev1.Pod, []string) {
	out, changes := Admit(pod, cfg)
	if !AsksForManaged(pod, cfg) || scheduler == "" {
		return out, changes
	}
	if name := out.Spec.SchedulerName; name == "" || name == corev1.DefaultSchedulerName {
		out.Spec.SchedulerName = scheduler
		// A pod that names no scheduler is already judged as HAMi's (Config.SchedulerName): only a named one
		// is worth a line.
		if name != "" && name != scheduler {
			changes = append(changes, fmt.Sprintf("spec.schedulerName: %s -> %s (the pod asks for HAMi's resources)", name, scheduler))
		}
	}
	return out, changes
}

// NewPod is a pod as the API server would create it now: through HAMi's webhook (Mutate, to cfg.SchedulerName),
// unless the pod is labelled hami.io/webhook=ignore, which the shipped webhook configuration never sends there.
// what-if judges its pods so: they have not been admitted yet.
func NewPod(pod *corev1.Pod, cfg Config) (*corev1.Pod, []string) {
	if pod.Labels[WebhookIgnoreLabel] == "ignore" {
		return pod.DeepCopy(), nil
	}
	return Mutate(pod, cfg, cfg.SchedulerName)
}
