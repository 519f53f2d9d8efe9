package engine

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
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
	if r.Source == "" {
		return r.Message // a value the webhook refuses, not a quota
	}
	return fmt.Sprintf("%s: %s in ResourceQuota %s: %d %s used + %d %s asked > %d %s limit",
		r.Message, r.Resource, r.Source, r.Used, r.Unit, r.Asked, r.Unit, r.Limit, r.Unit)
}

// AdmissionError is the error HAMi's webhook answers for a value a family's MutateAdmission refuses (every
// container, init containers first): NVIDIA's memory percentage outside 0-100 (validateMemoryPercentage,
// pkg/device/nvidia/device.go:349-351, 389-395), AMD's cores outside 1-100 (pkg/device/amd/device.go:78-87),
// and the other families' Mutate refusals. nil when every container passes.
func AdmissionError(pod *corev1.Pod, cfg Config) *WebhookRefusal {
	cfg = cfg.normalized()
	kinds := cfg.Kinds()
	check := func(c *corev1.Container) *WebhookRefusal {
		if name := cfg.ResourceMemoryPercentageName; name != "" {
			q, ok := c.Resources.Limits[corev1.ResourceName(name)]
			if !ok {
				q, ok = c.Resources.Requests[corev1.ResourceName(name)]
			}
			if pct := q.Value(); ok && (pct < 0 || pct > 100) {
				return &WebhookRefusal{Resource: name,
					Message: fmt.Sprintf("invalid %s value %d in container %s: must be an integer between 0 and 100", name, pct, c.Name)}
			}
		}
		for i := range kinds {
			k := &kinds[i]
			_, _, admit, _, _ := k.Readers()
			if why := admit(k, c, pod.Annotations); why != "" {
				return &WebhookRefusal{Resource: k.Count, Message: fmt.Sprintf("container %s: %s", c.Name, why)}
			}
		}
		return nil
	}
	for i := range pod.Spec.InitContainers {
		if r := check(&pod.Spec.InitContainers[i]); r != nil {
			return r
		}
	}
	for i := range pod.Spec.Containers {
		if r := check(&pod.Spec.Containers[i]); r != nil {
			return r
		}
	}
	return nil
}

// WebhookRefusal returns HAMi's admission-time refusal for a pod that has been through Admit, or nil when
// the webhook lets it be created: a value a family's MutateAdmission refuses (AdmissionError), else the quota.
// HAMi's webhook (fitResourceQuota, pkg/scheduler/webhook.go:145-189) checks every family with memory or
// cores resources: per container, its memory and cores per device times its count (app containers summed,
// init containers as their largest; memory times memoryFactor), skipping a family the pod asks no memory and
// no cores of, and refuses when the namespace's used plus that exceeds a limit of that family's keys. For
// NVIDIA it reads the spec only: memory given as a percentage and the default memory count nothing there, and
// the GPU-level quota gate decides them at scheduling time. A pod that asks for no device is never reported.
func (c *Cluster) WebhookRefusal(pod *corev1.Pod) *WebhookRefusal {
	if r := AdmissionError(pod, c.cfg); r != nil {
		return r
	}
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
	q := c.Quota(pod.Namespace)
	mem, cores = max(mem, initMem)*cfg.MemoryFactor, max(cores, initCores)
	if wants && (mem != 0 || cores != 0) { // webhook.go:181-183: nothing asked, nothing checked
		if l := q.Memory; l != nil && l.Used+mem > l.Limit {
			return &WebhookRefusal{Message: "exceeding resource quota", Resource: l.Resource, Source: l.Source, Asked: mem, Used: l.Used, Limit: l.Limit, Unit: "MiB"}
		}
		if l := q.Cores; l != nil && l.Used+cores > l.Limit {
			return &WebhookRefusal{Message: "exceeding resource quota", Resource: l.Resource, Source: l.Source, Asked: cores, Used: l.Used, Limit: l.Limit, Unit: "%"}
		}
	}
	if len(q.Devices) == 0 {
		return nil
	}
	return vendorQuotaRefusal(pod, cfg, c.kinds, q, c.learnedCores)
}

// learnedCores are the cores per device of kind on the first node, by name, that has devices of it: what a
// family that learns them from the first node it registers (device.Kind.WholeCores) knows. HAMi registers
// nodes in its informer's order, so where nodes differ its value may be another node's.
func (c *Cluster) learnedCores(kind int) int64 {
	for _, n := range c.nodeList {
		for i := range n.GPUs {
			if int(n.GPUs[i].Kind) == kind {
				return n.GPUs[i].TotalCores
			}
		}
	}
	return 0
}

// vendorQuotaRefusal is fitResourceQuota for the families besides NVIDIA: each family's request as its
// GenerateResourceRequests reads it (ParseRequest: memory times memoryFactor, a percentage or an unnamed
// memory counting nothing, the family's default cores), against its own limits.<memory> and limits.<cores>.
func vendorQuotaRefusal(pod *corev1.Pod, cfg Config, kinds []device.Kind, q QuotaStatus, learned func(kind int) int64) *WebhookRefusal {
	req, _ := parseRequest(pod, cfg, kinds)
	type sum struct{ mem, cores, initMem, initCores int64 }
	sums := map[int]*sum{}
	var order []int
	for _, cr := range req.Containers {
		if mainKind(&kinds[cr.Kind]) {
			continue // NVIDIA's quota is checked from the spec above
		}
		s := sums[cr.Kind]
		if s == nil {
			s = &sum{}
			sums[cr.Kind] = s
			order = append(order, cr.Kind)
		}
		perCores := max(cr.Cores, cr.webhookCores)
		if whole := kinds[cr.Kind].WholeCores; whole != nil && cr.CoresOfDevice {
			perCores = whole(learned(cr.Kind), cr.ByCores)
		}
		m, k := max(cr.MemoryMiB, cr.webhookMemory)*int64(cr.Count), perCores*int64(cr.Count)
		if cr.Init {
			s.initMem, s.initCores = max(s.initMem, m), max(s.initCores, k)
		} else {
			s.mem, s.cores = s.mem+m, s.cores+k
		}
	}
	line := func(res string) *QuotaLine {
		for i := range q.Devices {
			if res != "" && q.Devices[i].Resource == "limits."+res {
				return &q.Devices[i]
			}
		}
		return nil
	}
	for _, kind := range order {
		s, k := sums[kind], &kinds[kind]
		mem, cores := max(s.mem, s.initMem), max(s.cores, s.initCores)
		if mem == 0 && cores == 0 {
			continue
		}
		for _, c := range []struct {
			res  string
			need int64
		}{{k.Memory, mem}, {k.Cores, cores}} {
			if l := line(c.res); l != nil && l.Used+c.need > l.Limit {
				return &WebhookRefusal{Message: "exceeding resource quota", Resource: l.Resource, Source: l.Source, Asked: c.need, Used: l.Used, Limit: l.Limit, Unit: l.Unit}
			}
		}
	}
	return nil
}
