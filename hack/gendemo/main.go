// Command gendemo writes examples/demo-cluster.yaml: a realistic HAMi cluster snapshot for `make demo`.
// Running pods are placed by the engine itself, so their annotations are exactly what HAMi would write.
//
//	go run ./hack/gendemo > examples/demo-cluster.yaml
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

var created = metav1.NewTime(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC))

type gpuModel struct {
	name  string
	memMB int64
}

var (
	a100 = gpuModel{"NVIDIA A100-SXM4-80GB", 81920}
	h100 = gpuModel{"NVIDIA H100 80GB HBM3", 81559}
	t4   = gpuModel{"NVIDIA-Tesla T4", 15360}
	l4   = gpuModel{"NVIDIA L4", 23034}
)

func devices(node string, m gpuModel, n int, split int32) []codec.DeviceInfo {
	out := make([]codec.DeviceInfo, n)
	for i := range out {
		out[i] = codec.DeviceInfo{ID: fmt.Sprintf("GPU-%s-%d", node, i), Index: i, Count: split, Devmem: m.memMB, Devcore: 100,
			Type: m.name, Numa: i * 2 / max(n, 1), Health: true, Mode: "hami-core"}
	}
	return out
}

func node(name string, devs []codec.DeviceInfo, labels map[string]string, annos ...string) *corev1.Node {
	n := &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}, Annotations: map[string]string{}, CreationTimestamp: created}}
	for k, v := range labels {
		n.Labels[k] = v
	}
	var slots int64
	if devs != nil {
		n.Annotations[codec.NodeRegisterAnnotation] = codec.FormatNodeRegister(devs)
		for _, d := range devs {
			slots += int64(d.Count)
		}
	}
	for i := 0; i+1 < len(annos); i += 2 {
		n.Annotations[annos[i]] = annos[i+1]
	}
	n.Status.Capacity = corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"), "pods": resource.MustParse("110")}
	n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	if devs != nil {
		n.Status.Allocatable["nvidia.com/gpu"] = *resource.NewQuantity(slots, resource.DecimalSI)
		n.Status.Capacity["nvidia.com/gpu"] = *resource.NewQuantity(slots, resource.DecimalSI)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: created, LastTransitionTime: created}}
	return n
}

// gpuPod is a pod with one container asking for count GPUs; mem<0 leaves memory out, pct>0 uses a percentage.
func gpuPod(ns, name string, count, mem, pct, cores int64, annos ...string) *corev1.Pod {
	l := corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(count, resource.DecimalSI)}
	if mem > 0 {
		l["nvidia.com/gpumem"] = *resource.NewQuantity(mem, resource.DecimalSI)
	}
	if pct > 0 {
		l["nvidia.com/gpumem-percentage"] = *resource.NewQuantity(pct, resource.DecimalSI)
	}
	if cores >= 0 {
		l["nvidia.com/gpucores"] = *resource.NewQuantity(cores, resource.DecimalSI)
	}
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{}, CreationTimestamp: created,
			UID: types.UID("demo-" + ns + "-" + name)},
		Spec: corev1.PodSpec{SchedulerName: "hami-scheduler", Containers: []corev1.Container{{Name: "main", Image: "nvcr.io/nvidia/pytorch:24.10-py3",
			Resources: corev1.ResourceRequirements{Limits: l, Requests: corev1.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("8Gi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	for i := 0; i+1 < len(annos); i += 2 {
		p.Annotations[annos[i]] = annos[i+1]
	}
	return p
}

// vendorNode is a node whose device plugin registers devs in the register annotation of another device type
// (Ascend, Hygon ...), serving them as the count resource.
func vendorNode(name, register, countRes string, devs []codec.DeviceInfo, labels map[string]string) *corev1.Node {
	n := node(name, nil, labels, register, codec.FormatNodeRegister(devs))
	n.Status.Capacity[corev1.ResourceName(countRes)] = *resource.NewQuantity(int64(len(devs)), resource.DecimalSI)
	n.Status.Allocatable[corev1.ResourceName(countRes)] = *resource.NewQuantity(int64(len(devs)), resource.DecimalSI)
	return n
}

// vendorDevices is n devices of another type named <prefix>-<node>-<i>.
func vendorDevices(prefix, node, typ string, n int, mem, cores int64, split int32) []codec.DeviceInfo {
	out := make([]codec.DeviceInfo, n)
	for i := range out {
		out[i] = codec.DeviceInfo{ID: fmt.Sprintf("%s-%s-%d", prefix, node, i), Index: i, Count: split, Devmem: mem, Devcore: cores,
			Type: typ, Numa: i * 2 / max(n, 1), Health: true}
	}
	return out
}

// vendorPod is a pod with one container asking for the resources res (name, value, ...).
func vendorPod(ns, name, image string, res ...any) *corev1.Pod {
	p := gpuPod(ns, name, 0, -1, 0, -1)
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(res); i += 2 {
		l[corev1.ResourceName(res[i].(string))] = *resource.NewQuantity(int64(res[i+1].(int)), resource.DecimalSI)
	}
	p.Spec.Containers[0].Resources.Limits = l
	p.Spec.Containers[0].Image = image
	return p
}

func quota(ns, name string, hard ...string) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: created},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
	for i := 0; i+1 < len(hard); i += 2 {
		q.Spec.Hard[corev1.ResourceName(hard[i])] = resource.MustParse(hard[i+1])
	}
	return q
}

// Card names as Volcano's card quota reads them from GPU-feature-discovery labels.
const (
	cardA100 = "NVIDIA-A100-SXM4-80GB"
	cardH100 = "NVIDIA-H100-80GB-HBM3"
)

// gfd is the labels NVIDIA's GPU feature discovery puts on a node, which name its card model.
func gfd(model string, m gpuModel, count int) map[string]string {
	product := map[string]string{"A100": cardA100, "H100": cardH100}[model]
	return map[string]string{"gpu.vendor/model": model, "nvidia.com/gpu.product": product,
		"nvidia.com/gpu.count": fmt.Sprint(count), "nvidia.com/gpu.memory": fmt.Sprint(m.memMB)}
}

func volcanoQueue(name string, quota map[string]int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
		"metadata": map[string]any{"name": name, "creationTimestamp": created.UTC().Format(time.RFC3339),
			"annotations": map[string]any{codec.CardQuotaAnnotation: codec.FormatCardCounts(quota)}},
		"spec":   map[string]any{"weight": int64(1), "reclaimable": false, "capability": map[string]any{"cpu": "256", "memory": "2Ti"}},
		"status": map[string]any{"state": "Open"},
	}}
}

func podGroup(ns, name, queue string, minMember int64, phase string, request map[string]int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
		"metadata": map[string]any{"namespace": ns, "name": name, "creationTimestamp": created.UTC().Format(time.RFC3339),
			"annotations": map[string]any{codec.CardRequestAnnotation: codec.FormatCardCounts(request)}},
		"spec":   map[string]any{"queue": queue, "minMember": minMember},
		"status": map[string]any{"phase": phase},
	}}
}

func main() {
	if err := generate(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gendemo:", err)
		os.Exit(1)
	}
}

// generate writes the demo snapshot.
func generate(w io.Writer) error {
	s := &snapshot.Snapshot{}
	a2 := devices("gpu-a100-02", a100, 8, 10)
	a2[3].Health = false
	migDevs := devices("gpu-h100-mig", h100, 2, 7)
	for i := range migDevs {
		migDevs[i].Mode = "mig"
		migDevs[i].MigProfiles = []codec.MigProfile{
			{Name: "1g.10gb", MemoryMB: 9856, Core: 14, SliceCount: 1, Placements: []codec.MigPlacement{{Start: 0, Size: 1}, {Start: 1, Size: 1}, {Start: 2, Size: 1}, {Start: 3, Size: 1}, {Start: 4, Size: 1}, {Start: 5, Size: 1}, {Start: 6, Size: 1}}},
			{Name: "2g.20gb", MemoryMB: 20096, Core: 28, SliceCount: 2, Placements: []codec.MigPlacement{{Start: 0, Size: 2}, {Start: 2, Size: 2}, {Start: 4, Size: 2}}},
			{Name: "3g.40gb", MemoryMB: 40192, Core: 42, SliceCount: 3, Placements: []codec.MigPlacement{{Start: 0, Size: 4}, {Start: 4, Size: 4}}},
			{Name: "7g.80gb", MemoryMB: 80384, Core: 100, SliceCount: 7, Placements: []codec.MigPlacement{{Start: 0, Size: 8}}},
		}
	}
	l4Node := node("gpu-l4-01", devices("gpu-l4-01", l4, 2, 10), map[string]string{"gpu.vendor/model": "L4"})
	// The device plugin is not serving, and HAMi's scheduler stamped the node a day ago: past its 60 s
	// handshake grace in every time zone, so HAMi drops the node (a node never stamped would be judged).
	l4Node.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("0")
	l4Node.Annotations[codec.NodeHandshakeAnnotation] = codec.FormatHandshakeRequesting(created.Add(-24 * time.Hour))
	t4Legacy := node("gpu-t4-03", nil, map[string]string{"gpu.vendor/model": "T4"},
		codec.NodeRegisterAnnotation, codec.FormatNodeRegisterLegacy(devices("gpu-t4-03", t4, 4, 4)))
	t4Legacy.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("16")
	s.Nodes = []*corev1.Node{
		node("cpu-01", nil, nil),
		node("gpu-a100-01", devices("gpu-a100-01", a100, 8, 10), gfd("A100", a100, 8)),
		node("gpu-a100-02", a2, gfd("A100", a100, 8), codec.NodeCordonAnnotation, "GPU-gpu-a100-02-5"),
		node("gpu-h100-01", devices("gpu-h100-01", h100, 8, 10), gfd("H100", h100, 8)),
		node("gpu-h100-mig", migDevs, gfd("H100", h100, 2)),
		node("gpu-t4-01", devices("gpu-t4-01", t4, 4, 4), map[string]string{"gpu.vendor/model": "T4"}),
		node("gpu-t4-02", devices("gpu-t4-02", t4, 4, 4), map[string]string{"gpu.vendor/model": "T4"}),
		t4Legacy,
		l4Node,
		// A mixed pool: HAMi's Ascend and Hygon device plugins register their devices beside NVIDIA's.
		vendorNode("gpu-mx-npu", "hami.io/node-register-Ascend910B3", "huawei.com/Ascend910B3",
			vendorDevices("NPU", "gpu-mx-npu", "Ascend910B3", 4, 65536, 20, 4), map[string]string{"accelerator": "huawei-Ascend910"}),
		vendorNode("gpu-mx-dcu", "hami.io/node-dcu-register", "hygon.com/dcunum",
			vendorDevices("DCU", "gpu-mx-dcu", "DCU-K100", 4, 65536, 100, 4), map[string]string{"accelerator": "hygon-dcu"}),
	}
	s.Quotas = []*corev1.ResourceQuota{
		quota("ml-research", "gpu-quota", "limits.nvidia.com/gpumem", "900000", "limits.nvidia.com/gpucores", "2000"),
		quota("inference", "gpu-quota", "limits.nvidia.com/gpumem", "64000", "limits.nvidia.com/gpucores", "400"),
		quota("team-vision", "gpu-quota", "limits.nvidia.com/gpumem", "120000", "requests.nvidia.com/gpumem", "160000"),
		quota("speech", "dcu-quota", "limits.hygon.com/dcumem", "80000"),
	}
	s.ConfigMaps = []*corev1.ConfigMap{{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "hami-scheduler-device", CreationTimestamp: created},
		Data:       map[string]string{snapshot.DeviceConfigKey: "nvidia:\n  resourceCountName: nvidia.com/gpu\n  resourceMemoryName: nvidia.com/gpumem\n  resourceMemoryPercentageName: nvidia.com/gpumem-percentage\n  resourceCoreName: nvidia.com/gpucores\n  defaultMemory: 0\n  defaultCores: 0\n  defaultGPUNum: 1\n  deviceSplitCount: 10\n"}}}

	running := []*corev1.Pod{
		gpuPod("ml-research", "pretrain-0", 4, 70000, 0, 80, engine.AnnoGPUPolicy, "binpack", codec.CardNameAnnotation, cardA100, codec.QueueNameAnnotation, "research"),
		gpuPod("ml-research", "pretrain-1", 4, 70000, 0, 80, engine.AnnoGPUPolicy, "binpack", codec.CardNameAnnotation, cardA100, codec.QueueNameAnnotation, "research"),
		gpuPod("ml-research", "finetune-a", 2, 40000, 0, 50),
		gpuPod("ml-research", "finetune-b", 2, 40000, 0, 50),
		gpuPod("ml-research", "notebook-alice", 1, 12000, 0, 20),
		gpuPod("ml-research", "notebook-bob", 1, 12000, 0, 20),
		gpuPod("inference", "llm-serve-0", 1, 24000, 0, 30, engine.AnnoUseGPUType, "H100", codec.CardNameAnnotation, cardH100, codec.QueueNameAnnotation, "serving"),
		gpuPod("inference", "llm-serve-1", 1, 24000, 0, 30, engine.AnnoUseGPUType, "H100", codec.CardNameAnnotation, cardH100, codec.QueueNameAnnotation, "serving"),
		gpuPod("inference", "embedder-0", 1, 0, 15, 10, engine.AnnoUseGPUType, "A100"),
		gpuPod("team-vision", "detector-0", 1, 10000, 0, 40, engine.AnnoUseGPUType, "T4"),
		gpuPod("team-vision", "detector-1", 1, 10000, 0, 40, engine.AnnoUseGPUType, "T4"),
		gpuPod("team-vision", "segmenter-0", 1, 12000, 0, 50, engine.AnnoUseGPUType, "T4"),
		gpuPod("team-vision", "mig-small-0", 1, 9000, 0, -1, engine.AnnoVGPUMode, "mig"),
		gpuPod("team-vision", "mig-medium-0", 1, 18000, 0, -1, engine.AnnoVGPUMode, "mig"),
		gpuPod("default", "batch-render", 2, 30000, 0, 60, engine.AnnoGPUPolicy, "spread"),
		vendorPod("npu-lab", "npu-train-0", "ascendhub.huawei.com/public-ascendhub/mindspore:2.3", "huawei.com/Ascend910B3", 2),
		vendorPod("npu-lab", "npu-infer-0", "ascendhub.huawei.com/public-ascendhub/mindie:1.0", "huawei.com/Ascend910B3", 1, "huawei.com/Ascend910B3-memory", 12000),
		vendorPod("speech", "dcu-train-0", "image.sourcefind.cn:5000/dcu/admin/base/pytorch:2.1", "hygon.com/dcunum", 2, "hygon.com/dcumem", 24000, "hygon.com/dcucores", 50),
		vendorPod("speech", "dcu-notebook-0", "image.sourcefind.cn:5000/dcu/admin/base/jupyter:1", "hygon.com/dcunum", 1, "hygon.com/dcumem", 16000, "hygon.com/dcucores", 20),
	}
	pending := []*corev1.Pod{
		gpuPod("inference", "llm-serve-2", 1, 24000, 0, 30, engine.AnnoUseGPUType, "H100"),
		gpuPod("ml-research", "pretrain-2", 4, 80000, 0, 80),
		gpuPod("team-vision", "detector-xl", 1, 16000, 0, 40, engine.AnnoUseGPUType, "T4"),
		gpuPod("ml-research", "whole-card-eval", 2, -1, 0, -1, engine.AnnoUseGPUType, "A100"),
		gpuPod("default", "numa-allreduce", 5, 30000, 0, 50, engine.AnnoNumaBind, "true"),
		gpuPod("team-vision", "mig-large", 1, 70000, 0, -1, engine.AnnoVGPUMode, "mig"),
		gpuPod("inference", "reranker-0", 1, 8000, 0, 10, codec.CardNameAnnotation, cardH100, codec.QueueNameAnnotation, "serving"),
		vendorPod("npu-lab", "npu-train-1", "ascendhub.huawei.com/public-ascendhub/mindspore:2.3", "huawei.com/Ascend910B3", 4),
	}
	// Volcano queues with card-model quotas (volcano.sh/card.quota) and a job waiting to enter its queue.
	s.Volcano = true
	s.Queues = []*unstructured.Unstructured{
		volcanoQueue("research", map[string]int64{cardA100: 12, cardH100: 2}),
		volcanoQueue("serving", map[string]int64{cardH100: 2, cardA100: 1}),
	}
	s.PodGroups = []*unstructured.Unstructured{
		podGroup("ml-research", "train-llm", "research", 2, "Pending", map[string]int64{cardA100 + "|" + cardH100: 8}),
	}
	cfg, _ := s.Config(snapshot.DefaultDeviceConfigMap)
	c, _ := s.Cluster(cfg)
	start := created.Add(10 * time.Minute)
	for i, p := range running {
		admitted, _ := engine.Admit(p, cfg)
		v := c.Evaluate(admitted, engine.EvalOptions{})
		if !v.Fits {
			return fmt.Errorf("running pod %s/%s does not fit: %s", p.Namespace, p.Name, v.Summary)
		}
		at := start.Add(time.Duration(i) * time.Minute)
		for k, val := range v.Placement.Annotations(at) {
			admitted.Annotations[k] = val
		}
		admitted.Annotations[codec.PodBindPhaseAnnotation] = "success"
		admitted.Labels = map[string]string{codec.PodNodeAnnotation: v.Placement.Node}
		admitted.Spec.NodeName = v.Placement.Node
		admitted.Status.Phase = corev1.PodRunning
		c.SetPod(admitted)
		s.Pods.Add(admitted)
	}
	for _, p := range pending {
		admitted, _ := engine.Admit(p, cfg)
		s.Pods.Add(admitted)
		v := c.Evaluate(admitted, engine.EvalOptions{})
		if v.Fits {
			continue
		}
		s.Events = append(s.Events, &corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
			ObjectMeta:     metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name + ".failedscheduling", CreationTimestamp: created},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
			Reason:         "FailedScheduling", Type: corev1.EventTypeWarning, Count: 12,
			FirstTimestamp: metav1.NewTime(start), LastTimestamp: metav1.NewTime(start.Add(30 * time.Minute)),
			Message: v.Summary, Source: corev1.EventSource{Component: "hami-scheduler"}})
	}
	kubeQuotaStatus(s)
	fmt.Fprintln(w, "# Demo cluster for kubectl-hami: regenerate with `go run ./hack/gendemo > examples/demo-cluster.yaml`.")
	return s.WriteList(w, "yaml")
}

// kubeQuotaStatus fills status.used as Kubernetes computes it: over every pod, pending ones included (the quota
// admission plugin charges a pod when it is created), the sum of container limits, one GPU's worth per container
// whatever its GPU count, which is why it differs from HAMi's accounting (HAMi #1393).
func kubeQuotaStatus(s *snapshot.Snapshot) {
	for _, q := range s.Quotas {
		q.Status.Hard = q.Spec.Hard.DeepCopy()
		q.Status.Used = corev1.ResourceList{}
		for name := range q.Spec.Hard {
			var sum int64
			res := corev1.ResourceName(strings.TrimPrefix(strings.TrimPrefix(string(name), "limits."), "requests."))
			for p := range s.Pods.All() {
				if p.Namespace != q.Namespace {
					continue
				}
				for _, c := range p.Spec.Containers {
					if v, ok := c.Resources.Limits[res]; ok {
						sum += v.Value()
					}
				}
			}
			q.Status.Used[name] = *resource.NewQuantity(sum, resource.DecimalSI)
		}
	}
}
