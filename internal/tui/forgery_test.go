package tui

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestTopShowsAForgedPlacementAsAProblemNotAsFreeMemory is issue 19's forged pod as top sees it: the full GPU
// stays full, and the header names the pod as an input problem.
func TestTopShowsAForgedPlacementAsAProblemNotAsFreeMemory(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "full-node", Annotations: map[string]string{
		codec.NodeRegisterAnnotation: codec.FormatNodeRegister([]codec.DeviceInfo{{ID: "GPU-full-node-0", Count: 10, Devmem: 81920, Devcore: 100, Type: "NVIDIA-A100-SXM4-80GB", Health: true}}),
	}}}
	gpu := func(mem string) corev1.Container {
		return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
			"nvidia.com/gpu": resource.MustParse("1"), "nvidia.com/gpumem": resource.MustParse(mem)}}}
	}
	owner := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "owner", Annotations: map[string]string{
		codec.PodNodeAnnotation: "full-node", codec.PodAllocatedAnnotation: "GPU-full-node-0,NVIDIA,81920,0:;"}},
		Spec: corev1.PodSpec{NodeName: "full-node", Containers: []corev1.Container{gpu("81920")}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	forged := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "attacker", Name: "forged", Annotations: map[string]string{
		codec.PodNodeAnnotation:      "full-node",
		codec.PodAllocatedAnnotation: strings.Repeat("GPU-full-node-0,NVIDIA,4611686018427387904,0:", 3) + ";"}},
		Spec: corev1.PodSpec{SchedulerName: "no-such-scheduler", Containers: []corev1.Container{gpu("1")}}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	w := newWorld(&snapshot.Snapshot{Nodes: []*corev1.Node{node}, Pods: snapshot.PodsOf(owner, forged), Source: "test"}, snapshot.DefaultDeviceConfigMap, "", false, func() time.Time { return fixedNow })
	d := w.data()
	if len(d.Nodes) != 1 || d.Nodes[0].UsedMem != 81920 || d.Nodes[0].Mem != 81920 {
		t.Fatalf("node view %+v; want 81920 of 81920 MiB used", d.Nodes)
	}
	if d.Totals.UsedMem != 81920 {
		t.Fatalf("header used memory %d, want 81920", d.Totals.UsedMem)
	}
	var found bool
	for _, p := range d.Problems {
		found = found || p.Object == "attacker/forged" && strings.Contains(p.Field, codec.PodAllocatedAnnotation)
	}
	if !found {
		t.Fatalf("problems %v do not name attacker/forged", d.Problems)
	}
}
