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

// WebhookRefusal is HAMi's admission webhook refusing to create a pod ("exceeding resource quota"), with the
// numbers of the quota line that refuses it.
type WebhookRefusal struct {
	Message  string `json:"message"`  // HAMi's own text: exceeding resource quota
	Resource string `json:"resource"` // limits.nvidia.com/gpumem or limits.nvidia.com/gpucores
	Source   string `json:"source"`   // the ResourceQuota
	Asked    int64  `json:"asked"`
	Used     int64  `json:"used"`
	Limit    int64  `json:"limit"`
	Unit     string `json:"unit"`
}

// String is the refusal in one line, numbers included.
func (r *WebhookRefusal) String() string {
	return fmt.Sprintf("%s: %s in ResourceQuota %s: %d %s used + %d %s asked > %d %s limit",
		r.Message, r.Resource, r.Source, r.Used, r.Unit, r.Asked, r.Unit, r.Limit, r.Unit)
}

// WebhookRefusal returns HAMi's admission-time quota refusal for a pod that has been through Admit, or nil
// when the webhook lets it be created. HAMi's webhook (fitResourceQuota, pkg/scheduler/webhook.go) adds, per
// container, the spec's memory and cores per GPU times its GPU count (limits first, then requests; app
// containers summed, init containers as their largest), multiplies memory by memoryFactor, and refuses when
// the namespace's used plus that exceeds a limit. It reads the spec only: memory given as a percentage and
// the default memory count nothing there, and the GPU-level quota gate decides them at scheduling time.
// A pod that asks for no GPU is never reported.
func (c *Cluster) WebhookRefusal(pod *corev1.Pod) *WebhookRefusal {
	cfg := c.cfg
	get := func(ctr *corev1.Container, name string) (int64, bool) {
		q, ok := ctr.Resources.Limits[corev1.ResourceName(name)]
		if !ok {
			q, ok = ctr.Resources.Requests[corev1.ResourceName(name)]
		}
		if !ok {
			return 0, false
		}
		v, ok := q.AsInt64()
		return v, ok
	}
	per := func(ctr *corev1.Container) (mem, cores int64, gpus bool) {
		n, ok := get(ctr, cfg.ResourceCountName)
		if !ok {
			return 0, 0, false
		}
		if m, ok := get(ctr, cfg.ResourceMemoryName); ok {
			mem = m * n
		}
		if k, ok := get(ctr, cfg.ResourceCoreName); ok {
			cores = k * n
		}
		return mem, cores, n > 0
	}
	var mem, cores, initMem, initCores int64
	wants := false
	for i := range pod.Spec.InitContainers {
		m, k, g := per(&pod.Spec.InitContainers[i])
		initMem, initCores, wants = max(initMem, m), max(initCores, k), wants || g
	}
	for i := range pod.Spec.Containers {
		m, k, g := per(&pod.Spec.Containers[i])
		mem, cores, wants = mem+m, cores+k, wants || g
	}
	if !wants {
		return nil
	}
	mem, cores = max(mem, initMem)*cfg.MemoryFactor, max(cores, initCores)
	q := c.Quota(pod.Namespace)
	if l := q.Memory; l != nil && l.Used+mem > l.Limit {
		return &WebhookRefusal{Message: "exceeding resource quota", Resource: l.Resource, Source: l.Source, Asked: mem, Used: l.Used, Limit: l.Limit, Unit: "MiB"}
	}
	if l := q.Cores; l != nil && l.Used+cores > l.Limit {
		return &WebhookRefusal{Message: "exceeding resource quota", Resource: l.Resource, Source: l.Source, Asked: cores, Used: l.Used, Limit: l.Limit, Unit: "%"}
	}
	return nil
}
