// Package testbuild makes the Kubernetes objects tests need, in the style of kube-scheduler's st.MakePod():
// named, chained setters instead of positional arguments with -1 for "leave it out". Only tests import it.
//
//	testbuild.MakePod("team-a", "train").GPUs(2).GPUMem(20000).Annotation("nvidia.com/use-gputype", "A100").Obj()
//	testbuild.MakeContainer("main").GPUs(1).GPUCores(30).Obj()
package testbuild

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// HAMi's default NVIDIA resource names.
const (
	ResourceGPU           = "nvidia.com/gpu"
	ResourceGPUMem        = "nvidia.com/gpumem"
	ResourceGPUMemPercent = "nvidia.com/gpumem-percentage"
	ResourceGPUCores      = "nvidia.com/gpucores"
)

// ContainerWrapper builds a container whose resources are set as limits, as HAMi's users write them.
type ContainerWrapper struct{ c corev1.Container }

// MakeContainer starts a container with no resources.
func MakeContainer(name string) *ContainerWrapper {
	return &ContainerWrapper{c: corev1.Container{Name: name}}
}

// Limit sets one resource limit.
func (w *ContainerWrapper) Limit(res string, v int64) *ContainerWrapper {
	setLimit(&w.c, res, v)
	return w
}

func setLimit(c *corev1.Container, res string, v int64) {
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	c.Resources.Limits[corev1.ResourceName(res)] = *resource.NewQuantity(v, resource.DecimalSI)
}

// Request sets one resource request (kube-scheduler's checks read requests).
func (w *ContainerWrapper) Request(res, quantity string) *ContainerWrapper {
	if w.c.Resources.Requests == nil {
		w.c.Resources.Requests = corev1.ResourceList{}
	}
	w.c.Resources.Requests[corev1.ResourceName(res)] = resource.MustParse(quantity)
	return w
}

// GPUs sets nvidia.com/gpu.
func (w *ContainerWrapper) GPUs(n int64) *ContainerWrapper { return w.Limit(ResourceGPU, n) }

// GPUMem sets nvidia.com/gpumem in MiB.
func (w *ContainerWrapper) GPUMem(mib int64) *ContainerWrapper { return w.Limit(ResourceGPUMem, mib) }

// GPUMemPercent sets nvidia.com/gpumem-percentage.
func (w *ContainerWrapper) GPUMemPercent(pct int64) *ContainerWrapper {
	return w.Limit(ResourceGPUMemPercent, pct)
}

// GPUCores sets nvidia.com/gpucores in percent of one GPU.
func (w *ContainerWrapper) GPUCores(pct int64) *ContainerWrapper {
	return w.Limit(ResourceGPUCores, pct)
}

// Image sets the image.
func (w *ContainerWrapper) Image(image string) *ContainerWrapper {
	w.c.Image = image
	return w
}

// Obj returns the container.
func (w *ContainerWrapper) Obj() corev1.Container { return *w.c.DeepCopy() }

// PodWrapper builds a pod. Resource setters apply to the last container added; the first one adds a
// container named "main" when the pod has none.
type PodWrapper struct {
	p    corev1.Pod
	init bool // the last container added is an init container
}

// MakePod starts a Pending pod with an empty annotation map and no containers.
func MakePod(ns, name string) *PodWrapper {
	return &PodWrapper{p: corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}}
}

// Container adds an app container; the resource setters that follow apply to it.
func (w *PodWrapper) Container(name string) *PodWrapper {
	w.p.Spec.Containers = append(w.p.Spec.Containers, corev1.Container{Name: name})
	w.init = false
	return w
}

// InitContainer adds an init container; the resource setters that follow apply to it.
func (w *PodWrapper) InitContainer(name string) *PodWrapper {
	w.p.Spec.InitContainers = append(w.p.Spec.InitContainers, corev1.Container{Name: name})
	w.init = true
	return w
}

// Containers adds built containers as app containers.
func (w *PodWrapper) Containers(cs ...corev1.Container) *PodWrapper {
	w.p.Spec.Containers = append(w.p.Spec.Containers, cs...)
	w.init = false
	return w
}

// current is the last container added, "main" when there is none.
func (w *PodWrapper) current() *corev1.Container {
	list := &w.p.Spec.Containers
	if w.init {
		list = &w.p.Spec.InitContainers
	}
	if len(*list) == 0 {
		w.Container("main")
		list = &w.p.Spec.Containers
	}
	return &(*list)[len(*list)-1]
}

// Limit sets a resource limit of the current container.
func (w *PodWrapper) Limit(res string, v int64) *PodWrapper {
	setLimit(w.current(), res, v)
	return w
}

// GPUs sets nvidia.com/gpu of the current container.
func (w *PodWrapper) GPUs(n int64) *PodWrapper { return w.Limit(ResourceGPU, n) }

// GPUMem sets nvidia.com/gpumem (MiB) of the current container.
func (w *PodWrapper) GPUMem(mib int64) *PodWrapper { return w.Limit(ResourceGPUMem, mib) }

// GPUMemPercent sets nvidia.com/gpumem-percentage of the current container.
func (w *PodWrapper) GPUMemPercent(pct int64) *PodWrapper { return w.Limit(ResourceGPUMemPercent, pct) }

// GPUCores sets nvidia.com/gpucores of the current container.
func (w *PodWrapper) GPUCores(pct int64) *PodWrapper { return w.Limit(ResourceGPUCores, pct) }

// Image sets the current container's image.
func (w *PodWrapper) Image(image string) *PodWrapper {
	w.current().Image = image
	return w
}

// Annotation sets one annotation.
func (w *PodWrapper) Annotation(k, v string) *PodWrapper {
	w.p.Annotations[k] = v
	return w
}

// Label sets one label.
func (w *PodWrapper) Label(k, v string) *PodWrapper {
	if w.p.Labels == nil {
		w.p.Labels = map[string]string{}
	}
	w.p.Labels[k] = v
	return w
}

// UID sets metadata.uid.
func (w *PodWrapper) UID(uid string) *PodWrapper {
	w.p.UID = types.UID(uid)
	return w
}

// SchedulerName sets spec.schedulerName.
func (w *PodWrapper) SchedulerName(name string) *PodWrapper {
	w.p.Spec.SchedulerName = name
	return w
}

// Node binds the pod to a node and marks it Running.
func (w *PodWrapper) Node(name string) *PodWrapper {
	w.p.Spec.NodeName = name
	w.p.Status.Phase = corev1.PodRunning
	return w
}

// Phase sets status.phase.
func (w *PodWrapper) Phase(phase corev1.PodPhase) *PodWrapper {
	w.p.Status.Phase = phase
	return w
}

// Obj returns a copy of the pod built so far.
func (w *PodWrapper) Obj() *corev1.Pod { return w.p.DeepCopy() }
