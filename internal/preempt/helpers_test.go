package preempt

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

var t0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// gpuNode is a node with n A100s of mem MiB, 10 slots each, named <node>-g<i>.
func gpuNode(name string, n int, mem int64) *corev1.Node {
	devs := make([]codec.DeviceInfo, n)
	for i := range devs {
		devs[i] = codec.DeviceInfo{ID: fmt.Sprintf("%s-g%d", name, i), Index: i, Count: 10, Devmem: mem, Devcore: 100, Type: "NVIDIA-A100-SXM4-80GB", Health: true}
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{codec.NodeRegisterAnnotation: codec.FormatNodeRegister(devs)}}}
	node.Status.Allocatable = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(n)*10, resource.DecimalSI)}
	return node
}

// pending is a pod of the given priority asking for one GPU with mem MiB.
func pending(name string, prio int32, mem int64) *corev1.Pod {
	p := tb.MakePod("hi", name).Containers(tb.MakeContainer("c").GPUs(1).GPUMem(mem).Obj()).Obj()
	p.Spec.Priority = &prio
	return p
}

// running is a pod of the given priority holding mem MiB of GPU gpu on node, started minutes after t0.
func running(ns, name, node string, gpu int, mem int64, prio int32, minutes int) *corev1.Pod {
	p := pending(name, prio, mem)
	p.Namespace = ns
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	start := metav1.NewTime(t0.Add(time.Duration(minutes) * time.Minute))
	p.Status.StartTime = &start
	p.Annotations = map[string]string{
		codec.PodNodeAnnotation:      node,
		codec.PodAllocatedAnnotation: fmt.Sprintf("%s-g%d,NVIDIA,%d,0:;", node, gpu, mem),
	}
	return p
}

func world(nodes []*corev1.Node, pods []*corev1.Pod) *engine.Cluster {
	c := engine.NewCluster(engine.DefaultConfig())
	for _, n := range nodes {
		c.SetNode(n)
	}
	for _, p := range pods {
		c.SetPod(p)
	}
	return c
}

func engineOpts() engine.EvalOptions { return engine.EvalOptions{} }
