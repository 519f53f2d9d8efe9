package engine

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Admit returns a copy of the pod with the defaults HAMi's admission webhook adds before scheduling, and a
// line per change: containers that ask for GPU memory or cores but no GPU get DefaultGPUNum GPUs, and (since
// HAMi v2.8) a container whose memory is the whole card and that names no cores gets 100 % cores, so it
// needs an unused GPU. what-if and the extender's webhook both use it, so a pod is judged as it will run.
func Admit(pod *corev1.Pod, cfg Config) (*corev1.Pod, []string) {
	cfg = cfg.normalized()
	out := pod.DeepCopy()
	var changes []string
	admit := func(c *corev1.Container, kind string) {
		has := func(name string) bool {
			_, l := c.Resources.Limits[corev1.ResourceName(name)]
			_, r := c.Resources.Requests[corev1.ResourceName(name)]
			return l || r
		}
		set := func(name string, v int64) {
			if c.Resources.Limits == nil {
				c.Resources.Limits = corev1.ResourceList{}
			}
			c.Resources.Limits[corev1.ResourceName(name)] = *resource.NewQuantity(v, resource.DecimalSI)
		}
		if !has(cfg.ResourceCountName) && cfg.DefaultGPUNum > 0 &&
			(has(cfg.ResourceMemoryName) || has(cfg.ResourceMemoryPercentageName) || has(cfg.ResourceCoreName)) {
			set(cfg.ResourceCountName, cfg.DefaultGPUNum)
			changes = append(changes, fmt.Sprintf("%s %s: %s set to the default %d", kind, c.Name, cfg.ResourceCountName, cfg.DefaultGPUNum))
		}
		if !has(cfg.ResourceCountName) || has(cfg.ResourceCoreName) || has(cfg.ResourceMemoryName) || cfg.DefaultMemory > 0 {
			return
		}
		if has(cfg.ResourceMemoryPercentageName) {
			q := c.Resources.Limits[corev1.ResourceName(cfg.ResourceMemoryPercentageName)]
			if q.IsZero() {
				q = c.Resources.Requests[corev1.ResourceName(cfg.ResourceMemoryPercentageName)]
			}
			if quantityValue(q) < 100 {
				return
			}
		}
		set(cfg.ResourceCoreName, 100)
		changes = append(changes, fmt.Sprintf("%s %s: whole-card memory, so %s set to 100 (an unused GPU is needed)", kind, c.Name, cfg.ResourceCoreName))
	}
	for i := range out.Spec.InitContainers {
		admit(&out.Spec.InitContainers[i], "init container")
	}
	for i := range out.Spec.Containers {
		admit(&out.Spec.Containers[i], "container")
	}
	return out, changes
}
