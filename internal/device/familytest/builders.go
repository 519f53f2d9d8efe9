package familytest

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// The objects of a family's cases: nodes that register devices by annotation or capacity, pods written by
// resource maps (Pod) or containers (MkPod, Ctr), and pods counted on a node.

// Register is HAMi's JSON device list of a register annotation.
func Register(devs ...codec.DeviceInfo) string { return codec.FormatNodeRegister(devs) }

// Devs is n devices of a type named <node>-<word><i>, with memory, cores and slots.
func Devs(node, word, typ string, n int, mem, cores int64, slots int32) []codec.DeviceInfo {
	out := make([]codec.DeviceInfo, n)
	for i := range out {
		out[i] = codec.DeviceInfo{ID: fmt.Sprintf("%s-%s%d", node, word, i), Index: i, Count: slots, Devmem: mem, Devcore: cores, Type: typ, Health: true}
	}
	return out
}

// Node is a node with these annotations and capacity (also its allocatable).
func Node(name string, annos map[string]string, capacity map[string]string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annos}}
	if len(capacity) > 0 {
		n.Status.Capacity, n.Status.Allocatable = corev1.ResourceList{}, corev1.ResourceList{}
		for r, v := range capacity {
			n.Status.Capacity[corev1.ResourceName(r)] = resource.MustParse(v)
			n.Status.Allocatable[corev1.ResourceName(r)] = resource.MustParse(v)
		}
	}
	return n
}

// RegNode is a node registering devs in the register annotation key.
func RegNode(name, key string, devs []codec.DeviceInfo) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{key: codec.FormatNodeRegister(devs)}}}
}

// CapNode is a node whose device plugin registers no annotation: its devices come from status.capacity
// (resource, value pairs).
func CapNode(name string, kv ...any) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}}}
	n.Status.Capacity = corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Status.Capacity[corev1.ResourceName(kv[i].(string))] = *resource.NewQuantity(int64(kv[i+1].(int)), resource.DecimalSI)
	}
	return n
}

// Pod is a pod in namespace ns whose containers have these limits, one map per container.
func Pod(name string, annos map[string]string, containers ...map[string]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: annos}}
	for i, limits := range containers {
		c := corev1.Container{Name: "c" + string(rune('0'+i)), Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{}}}
		for r, v := range limits {
			c.Resources.Limits[corev1.ResourceName(r)] = resource.MustParse(v)
		}
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
	return p
}

// MkPod is a pending pod of namespace ns with these containers.
func MkPod(ns, name string, ctrs ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{}}, Spec: corev1.PodSpec{Containers: ctrs}}
}

// Ctr is a container asking for resources by name (resource, value pairs).
func Ctr(name string, kv ...any) corev1.Container {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i].(string))] = *resource.NewQuantity(int64(kv[i+1].(int)), resource.DecimalSI)
	}
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Limits: l}}
}

// WithAnno sets annotations (key, value pairs) on p.
func WithAnno(p *corev1.Pod, kv ...string) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Annotations[kv[i]] = kv[i+1]
	}
	return p
}

// Counted makes p a pod bound to node with this device list annotation (key: the Kind's Allocated).
func Counted(p *corev1.Pod, node, key, devices string) *corev1.Pod {
	WithAnno(p, key, devices, codec.PodNodeAnnotation, node, codec.PodBindPhaseAnnotation, codec.BindPhaseSuccess)
	p.Spec.NodeName = node
	return p
}

// OnNode is Counted under the name the gate tables used before the two table helpers became one; kept so that
// tests written meanwhile on other branches still build. Prefer Counted.
func OnNode(p *corev1.Pod, node, key, devices string) *corev1.Pod {
	return Counted(p, node, key, devices)
}
