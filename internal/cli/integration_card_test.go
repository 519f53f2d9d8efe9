package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// seedQuota is the card quota of seed 002's example queue cr-queue1.
const seedQuota = `{"NVIDIA-H200":3,"NVIDIA-H800":2,"NVIDIA-GeForce-RTX-4090":2,"NVIDIA-H800/mps-80g*1/2":2,"NVIDIA-H200/mig-1g.18gb-mixed":3,"NVIDIA-H200/mig-3g.71gb-mixed":1}`

// TestLiveCardQuotaScenarios runs seed 002's scenarios on a real apiserver with minimal Volcano CRDs: HAMi
// nodes labelled the way GPU feature discovery labels them (an H200 node with MIG slices beside its whole
// cards, an H800 node with MPS replicas, a 4090 and a 4090-D node), queue cr-queue1 with the seed's quota,
// and pods bound as a scheduler would leave them. Whole cards, sub-cards, "A|B" for a Deployment's pods and
// for a job's card.request, scale-up blocked when the queue is full and scale-down returning quota.
func TestLiveCardQuotaScenarios(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	env.InstallVolcanoCRDs(t)
	ctx := context.Background()
	cs, dyn := env.Client, env.Dynamic(t)

	type extra struct {
		res string
		n   int64
	}
	mkNode := func(name, product string, gpus int, memMiB int64, labels map[string]string, more ...extra) {
		t.Helper()
		devs := make([]codec.DeviceInfo, gpus)
		for i := range devs {
			devs[i] = codec.DeviceInfo{ID: fmt.Sprintf("GPU-%s-%d", name, i), Index: i, Count: 10, Devmem: memMiB, Devcore: 100, Type: product, Health: true}
		}
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{codec.NodeRegisterAnnotation: codec.FormatNodeRegister(devs)},
			Labels: map[string]string{"nvidia.com/gpu.product": product, "nvidia.com/gpu.count": fmt.Sprint(gpus), "nvidia.com/gpu.memory": fmt.Sprint(memMiB)}}}
		for k, v := range labels {
			n.Labels[k] = v
		}
		created, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		alloc := corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"), "pods": resource.MustParse("110"),
			"nvidia.com/gpu": *resource.NewQuantity(int64(gpus)*10, resource.DecimalSI)}
		for _, e := range more {
			alloc[corev1.ResourceName(e.res)] = *resource.NewQuantity(e.n, resource.DecimalSI)
		}
		created.Status = corev1.NodeStatus{Capacity: alloc, Allocatable: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mkNode("h200-1", "NVIDIA-H200", 7, 143771, nil, extra{"nvidia.com/mig-1g.18gb", 3}, extra{"nvidia.com/mig-3g.71gb", 1})
	mkNode("h800-1", "NVIDIA-H800", 6, 81559, map[string]string{"nvidia.com/gpu.replicas": "2"}, extra{"nvidia.com/gpu.shared", 4})
	mkNode("rtx-1", "NVIDIA-GeForce-RTX-4090", 4, 24564, nil)
	mkNode("rtx-d-1", "NVIDIA-GeForce-RTX-4090-D", 4, 24564, nil)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cr"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	queue := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
		"metadata": map[string]any{"name": "cr-queue1", "annotations": map[string]any{codec.CardQuotaAnnotation: seedQuota}},
		"spec":     map[string]any{"weight": int64(1), "capability": map[string]any{"cpu": "4", "memory": "4Gi"}}}}
	if _, err := dyn.Resource(snapshot.QueueGVR).Create(ctx, queue, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	group := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
		"metadata": map[string]any{"name": "cr-job", "namespace": "cr", "annotations": map[string]any{
			codec.CardRequestAnnotation: `{"NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D":2}`}},
		"spec": map[string]any{"queue": "cr-queue1", "minMember": int64(2)}}}
	created, err := dyn.Resource(snapshot.PodGroupGVR).Namespace("cr").Create(ctx, group, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"phase": "Pending"}
	if _, err := dyn.Resource(snapshot.PodGroupGVR).Namespace("cr").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// pod creates a pod of the queue naming card, asking for n of resource; node binds it there.
	pod := func(name, card, res string, n int64, node string) *corev1.Pod {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "cr", Name: name, Annotations: map[string]string{
			codec.CardNameAnnotation: card, codec.QueueNameAnnotation: "cr-queue1"}},
			Spec: corev1.PodSpec{SchedulerName: "volcano", NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "pause",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceName(res): *resource.NewQuantity(n, resource.DecimalSI)}}}}}}
		if res == "nvidia.com/gpu" {
			// HAMi's vGPU (gpumem) is HAMi's profile's to place; the queue's card quota applies on top.
			p.Spec.SchedulerName = "hami-scheduler"
			p.Spec.Containers[0].Resources.Limits["nvidia.com/gpumem"] = resource.MustParse("10000")
		}
		got, err := cs.CoreV1().Pods("cr").Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i := 0; i < 3; i++ { // a Deployment of 3 replicas on whole H200 cards: the queue's 3 are used
		pod(fmt.Sprintf("web-%d", i), "NVIDIA-H200", "nvidia.com/gpu", 1, "h200-1")
	}
	pod("web-3", "NVIDIA-H200", "nvidia.com/gpu", 1, "") // the HPA's scale-up
	for i := 0; i < 3; i++ {
		pod(fmt.Sprintf("mig-%d", i), "NVIDIA-H200/mig-1g.18gb-mixed", "nvidia.com/mig-1g.18gb", 1, "h200-1")
	}
	pod("mig-3", "NVIDIA-H200/mig-1g.18gb-mixed", "nvidia.com/mig-1g.18gb", 1, "")
	for i := 0; i < 2; i++ {
		pod(fmt.Sprintf("rtx-%d", i), "NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D", "nvidia.com/gpu", 1, "rtx-1")
	}
	pod("rtx-2", "NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D", "nvidia.com/gpu", 1, "")

	kc := env.Kubeconfig
	cmd := func(t *testing.T, args ...string) string {
		t.Helper()
		out, errOut, err := runB(t, append(args, "--kubeconfig", kc)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut)
		}
		return out
	}
	contains := func(t *testing.T, what, got string, want ...string) {
		t.Helper()
		// Table columns are compared with runs of spaces collapsed: their widths depend on the other rows.
		squeeze := func(s string) string { return strings.Join(strings.Fields(s), " ") }
		for _, w := range want {
			if !strings.Contains(squeeze(got), squeeze(w)) {
				t.Errorf("%s lacks %q:\n%s", what, w, got)
			}
		}
	}

	t.Run("whole cards: scale-up blocked when the queue is full", func(t *testing.T) {
		contains(t, "why-pending web-3", cmd(t, "why-pending", "web-3", "-n", "cr"),
			"QueueCardQuotaNotFit    1       h200-1: queue cr-queue1: NVIDIA-H200 3 of 3 used, the pod needs 1",
			"  NVIDIA-H200   nvidia.com/gpu   3      3       1           1       no quota left",
			"raise queue cr-queue1's card quota for NVIDIA-H200 (Queue cr-queue1 metadata.annotations[volcano.sh/card.quota][NVIDIA-H200]: 3 -> 4): then it fits on h200-1")
	})
	t.Run("sub-cards: MIG slices counted per profile", func(t *testing.T) {
		got := cmd(t, "why-pending", "mig-3", "-n", "cr")
		contains(t, "why-pending mig-3", got,
			// A MIG slice is Volcano's to place: kube-scheduler's resource check on allocatable (h200-1's three
			// slices are taken) beside the queue's card quota, which is full as well.
			"0/4 nodes are available: 4 Insufficient nvidia.com/mig-1g.18gb.",
			"Decided by volcano, not HAMi's profile",
			"NVIDIA-H200/mig-1g.18gb-mixed   nvidia.com/mig-1g.18gb   3      3       1           1       no quota left")
	})
	t.Run("sub-cards: an MPS replica from a manifest", func(t *testing.T) {
		manifest := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "mps", "namespace": "cr",
			"annotations": map[string]any{codec.CardNameAnnotation: "NVIDIA-H800/mps-80g*1/2", codec.QueueNameAnnotation: "cr-queue1"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "pause",
				"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu.shared": "1"}}}}}}
		y, _ := yaml.Marshal(manifest)
		f := filepath.Join(t.TempDir(), "mps.yaml")
		if err := os.WriteFile(f, y, 0o600); err != nil {
			t.Fatal(err)
		}
		contains(t, "what-if -f mps.yaml", cmd(t, "what-if", "-f", f, "--count", "3"),
			"1/4 nodes pass the card quota; preferred: h800-1 (NVIDIA-H800/mps-80g*1/2)",
			"NVIDIA-H800/mps-80g*1/2   nvidia.com/gpu.shared   0      2       1           1       fits")
	})
	t.Run("A|B for a Deployment's pod: both alternatives explained", func(t *testing.T) {
		contains(t, "why-pending rtx-2", cmd(t, "why-pending", "rtx-2", "-n", "cr"),
			"rtx-1: queue cr-queue1: NVIDIA-GeForce-RTX-4090 2 of 2 used, the pod needs 1",
			"alternative NVIDIA-GeForce-RTX-4090-D has no quota (not in volcano.sh/card.quota), the pod needs 1",
			"NVIDIA-GeForce-RTX-4090-D   nvidia.com/gpu   0      none    1           1       no quota",
			`queue cr-queue1 has no NVIDIA-GeForce-RTX-4090-D quota: add "NVIDIA-GeForce-RTX-4090-D": 1 to its volcano.sh/card.quota`)
	})
	t.Run("A|B for a job's card.request: cannot enqueue", func(t *testing.T) {
		contains(t, "top", cmd(t, "top", "--once"),
			"waiting job: job cr/cr-job in queue cr-queue1: NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D: 2 asked (volcano.sh/card.request) + 2 allocated + 0 in queue - 0 elastic = 4 > quota 2: cannot enqueue",
			"cr-queue1 NVIDIA-H200 3 3 0 1 7 4",
			"cr-queue1 NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D - 0 - 1 - -")
		var top Top
		if err := json.Unmarshal([]byte(cmd(t, "top", "-o", "json")), &top); err != nil {
			t.Fatal(err)
		}
		if len(top.Queues) != 1 || top.Queues[0].Queue != "cr-queue1" || top.Queues[0].PendingPods != 3 {
			t.Errorf("top -o json queues = %+v", top.Queues)
		}
	})
	t.Run("scale-down returns quota", func(t *testing.T) {
		if err := cs.CoreV1().Pods("cr").Delete(ctx, "web-0", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
		var v struct {
			Verdict struct {
				Fits      bool `json:"fits"`
				Placement struct {
					Node string `json:"node"`
				} `json:"placement"`
			} `json:"verdict"`
		}
		out := cmd(t, "why-pending", "web-3", "-n", "cr", "-o", "json")
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !v.Verdict.Fits || v.Verdict.Placement.Node != "h200-1" {
			t.Errorf("after the scale-down web-3 should fit on h200-1:\n%s", out)
		}
	})
}
