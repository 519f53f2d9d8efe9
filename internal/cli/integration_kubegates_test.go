package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestLiveKubeGates is issue 25's repro on a real kube-apiserver loaded with the demo cluster, as a new user
// would try it: cordon gpu-t4-02 and taint gpu-t4-01 through the API, create a pod selecting gpu-t4-01, then
// why-pending and what-if on the live cluster. No scheduler runs here: the fitting pod is told so.
func TestLiveKubeGates(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	loadDemo(t, env.Client)
	ctx := t.Context()
	nodes := env.Client.CoreV1().Nodes()
	for name, change := range map[string]func(n *corev1.Node){
		"gpu-t4-02": func(n *corev1.Node) { // kubectl cordon
			n.Spec.Unschedulable = true
		},
		"gpu-t4-01": func(n *corev1.Node) { // kubectl taint node gpu-t4-01 dedicated=vision:NoSchedule
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "dedicated", Value: "vision", Effect: corev1.TaintEffectNoSchedule})
		},
	} {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(n)
		if _, err := nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name string, selector map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.PodSpec{SchedulerName: "hami-scheduler", NodeSelector: selector, Containers: []corev1.Container{{Name: "main", Image: "vision:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"), "nvidia.com/gpumem": resource.MustParse("1000")}}}}}}
	}
	for _, p := range []*corev1.Pod{pod("vision-1", map[string]string{"kubernetes.io/hostname": "gpu-t4-01"}), pod("free-1", nil)} {
		if _, err := env.Client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kc := env.Kubeconfig
	out, errOut, err := run(t, "why-pending", "vision-1", "-n", "default", "--kubeconfig", kc)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"0/11 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 9 node(s) didn't match Pod's node affinity/selector.",
		"gpu-t4-01: the pod does not tolerate taint dedicated=vision:NoSchedule", "then it fits on gpu-t4-01"} {
		if !strings.Contains(out, want) {
			t.Errorf("live why-pending: missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "nodes are available; best") || strings.Contains(out, "Placement on") {
		t.Errorf("live why-pending places a pod no node takes:\n%s", out)
	}
	top, _, err := run(t, "top", "--once", "--kubeconfig", kc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(top, "SchedulingDisabled") || !strings.Contains(top, "taint dedicated=vision:NoSchedule") {
		t.Errorf("live top does not show the cordon and the taint:\n%s", top)
	}
	free, _, err := run(t, "why-pending", "free-1", "-n", "default", "--kubeconfig", kc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(free, "Why it may still be Pending:") || !strings.Contains(free, "no scheduler named hami-scheduler is seen") {
		t.Errorf("live why-pending of a fitting pod with no scheduler running:\n%s", free)
	}
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: vision-2}\nspec:\n  nodeSelector: {kubernetes.io/hostname: gpu-t4-01}\n  containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 1000}}}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "what-if", "-f", manifest, "-n", "default", "--exit-code", "--kubeconfig", kc); !errors.Is(err, errWouldNotFit) {
		t.Errorf("live what-if --exit-code for a pod selecting the tainted node: %v, want errWouldNotFit", err)
	}
}
