package engine

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// dev is a healthy 10-slot, 100-core GPU with the given memory.
func dev(id string, index int, memMiB int64) codec.DeviceInfo {
	return codec.DeviceInfo{ID: id, Index: index, Count: 10, Devmem: memMiB, Devcore: 100, Type: "NVIDIA-A100-SXM4-80GB", Health: true}
}

// gpus is n identical GPUs named <node>-g<i>.
func gpus(node string, n int, memMiB int64) []codec.DeviceInfo {
	out := make([]codec.DeviceInfo, n)
	for i := range out {
		out[i] = dev(fmt.Sprintf("%s-g%d", node, i), i, memMiB)
	}
	return out
}

func mkNode(name string, devs []codec.DeviceInfo, annos ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}}}
	if devs != nil {
		n.Annotations[codec.NodeRegisterAnnotation] = codec.FormatNodeRegister(devs)
	}
	for i := 0; i+1 < len(annos); i += 2 {
		n.Annotations[annos[i]] = annos[i+1]
	}
	n.Status.Allocatable = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(len(devs))*10, resource.DecimalSI)}
	return n
}

func mkPod(ns, name string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{}},
		Spec: corev1.PodSpec{Containers: containers}}
}

func withAnno(p *corev1.Pod, kv ...string) *corev1.Pod {
	for i := 0; i+1 < len(kv); i += 2 {
		p.Annotations[kv[i]] = kv[i+1]
	}
	return p
}

// placedOn marks a pod as placed by HAMi with the given device list.
func placedOn(p *corev1.Pod, node, devices string) *corev1.Pod {
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	return withAnno(p, codec.PodNodeAnnotation, node, codec.PodAllocatedAnnotation, devices)
}

func mkQuota(ns, name string, kv ...string) *corev1.ResourceQuota {
	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		rq.Spec.Hard[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return rq
}

func newTestCluster(nodes []*corev1.Node, pods []*corev1.Pod, quotas ...*corev1.ResourceQuota) *Cluster {
	c := NewCluster(DefaultConfig())
	for _, n := range nodes {
		c.SetNode(n)
	}
	for _, p := range pods {
		c.SetPod(p)
	}
	for _, q := range quotas {
		c.SetQuota(q)
	}
	return c
}
