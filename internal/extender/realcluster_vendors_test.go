package extender_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device/metaxsgpu"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

// xtVendorNode is a node whose device plugin registers devs of another type in register (empty: none; the
// devices come from the node's capacity), serving count of them as countRes.
func xtVendorNode(name, register, countRes string, devs []codec.DeviceInfo, capacity corev1.ResourceList) *corev1.Node {
	n := xtNode(name, nil)
	delete(n.Status.Capacity, "nvidia.com/gpu")
	delete(n.Status.Allocatable, "nvidia.com/gpu")
	if register != "" {
		n.Annotations[register] = codec.FormatNodeRegister(devs)
	}
	n.Status.Capacity[corev1.ResourceName(countRes)] = *resource.NewQuantity(int64(max(len(devs), 1)), resource.DecimalSI)
	for k, v := range capacity {
		n.Status.Capacity[k] = v
	}
	n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	return n
}

func xtVendorDevs(node, typ string, n int, mem, cores int64, slots int32) []codec.DeviceInfo {
	out := make([]codec.DeviceInfo, n)
	for i := range out {
		out[i] = codec.DeviceInfo{ID: fmt.Sprintf("%s-%d", node, i), Index: i, Count: slots, Devmem: mem, Devcore: cores, Type: typ, Health: true}
	}
	return out
}

// xtVendorPod is a pod with one container asking for res (name, value, ...).
func xtVendorPod(ns, name string, res ...any) *corev1.Pod {
	p := xtPod(ns, name).Obj()
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(res); i += 2 {
		l[corev1.ResourceName(res[i].(string))] = *resource.NewQuantity(int64(res[i+1].(int)), resource.DecimalSI)
	}
	p.Spec.Containers[0].Resources.Limits = l
	return p
}

// TestRealMixedCluster: on a real kube-apiserver and kube-scheduler, a cluster of NVIDIA, Hygon DCU, Ascend
// 910B3 and 910C, Cambricon MLU, MetaX (whole and sGPU), Iluvatar, Moore Threads, Kunlunxin (whole and
// vXPU), Enflame GCU, AMD, Biren, Vastai and AWS Neuron (inf2) nodes: serve-extender places a pod of every type on the node of
// its type with HAMi's annotations for that type (the engine's prediction for the node), and a pod asking
// for more NPUs than any node has stays Pending with HAMi's reason and numbers.
func TestRealMixedCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	env, x := xtStartLive(t)
	c := env.Client
	ctx := context.Background()
	xtCreateNode(t, c, xtNode("nv-1", xtGPUs("nv-1", 2, 16384, 10)))
	xtCreateNode(t, c, xtVendorNode("dcu-1", "hami.io/node-dcu-register", "hygon.com/dcunum", xtVendorDevs("dcu-1", "DCU-K100", 4, 65536, 100, 4), nil))
	xtCreateNode(t, c, xtVendorNode("npu-1", "hami.io/node-register-Ascend910B3", "huawei.com/Ascend910B3", xtVendorDevs("npu-1", "Ascend910B3", 4, 65536, 20, 4), nil))
	xtCreateNode(t, c, xtVendorNode("c910-1", "hami.io/node-register-Ascend910C", "huawei.com/Ascend910C", xtVendorDevs("c910-1", "Ascend910C", 4, 65536, 20, 1), nil))
	xtCreateNode(t, c, xtVendorNode("mlu-1", "", "cambricon.com/mlu", nil, corev1.ResourceList{
		"cambricon.com/mlu.smlu.vcore": resource.MustParse("200"), "cambricon.com/mlu.smlu.vmemory": resource.MustParse("128")}))
	xtCreateNode(t, c, xtVendorNode("mx-1", "", "metax-tech.com/gpu", xtVendorDevs("mx-1", "Metax-GPU", 2, 65536, 100, 1), nil))
	sg := xtVendorNode("sg-1", "", "metax-tech.com/sgpu", xtVendorDevs("sg-1", "Metax-SGPU", 2, 32768, 100, 16), nil)
	sg.Annotations[metaxsgpu.RegisterAnnotation] = metaxsgpu.FormatRegister(xtVendorDevs("sg-1", "Metax-SGPU", 2, 32768, 100, 16))
	xtCreateNode(t, c, sg)
	xtCreateNode(t, c, xtVendorNode("ilu-1", "hami.io/node-MR-V100-register", "iluvatar.ai/MR-V100-vgpu", xtVendorDevs("ilu-1", "MR-V100", 2, 32768, 100, 8), nil))
	xtCreateNode(t, c, xtVendorNode("mt-1", "", "mthreads.com/vgpu", nil, corev1.ResourceList{
		"mthreads.com/sgpu-core": resource.MustParse("32"), "mthreads.com/sgpu-memory": resource.MustParse("192")}))
	xtCreateNode(t, c, xtVendorNode("kl-1", "", "kunlunxin.com/xpu", nil, corev1.ResourceList{"kunlunxin.com/xpu": resource.MustParse("8")}))
	xtCreateNode(t, c, xtVendorNode("xpu-1", "hami.io/node-register-xpu", "kunlunxin.com/vxpu", xtVendorDevs("xpu-1", "XPU", 8, 98304, 100, 4), nil))
	xtCreateNode(t, c, xtVendorNode("gcu-1", "", "enflame.com/gcu", nil, corev1.ResourceList{"enflame.com/gcu": resource.MustParse("2")}))
	xtCreateNode(t, c, xtVendorNode("amd-1", "hami.io/node-amd-register", "amd.com/gpu", xtVendorDevs("amd-1", "MI300X", 2, 196608, 304, 10), nil))
	xtCreateNode(t, c, xtVendorNode("br-1", "hami.io/node-biren-register", "birentech.com/gpu", xtVendorDevs("br-1", "BR104", 2, 32768, 100, 4), nil))
	inf := xtVendorNode("inf-1", "", "aws.amazon.com/neuron", nil, corev1.ResourceList{
		"aws.amazon.com/neuron": resource.MustParse("2"), "aws.amazon.com/neuroncore": resource.MustParse("4")})
	if inf.Labels == nil {
		inf.Labels = map[string]string{}
	}
	inf.Labels["node.kubernetes.io/instance-type"] = "inf2.8xlarge"
	xtCreateNode(t, c, inf)
	xtCreateNode(t, c, xtVendorNode("va-1", "hami.io/node-va-register", "vastaitech.com/va", xtVendorDevs("va-1", "VA1", 2, 16384, 100, 4), nil))
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool {
		for _, n := range []string{"nv-1", "dcu-1", "npu-1", "c910-1", "mlu-1", "mx-1", "sg-1", "ilu-1", "mt-1", "kl-1", "xpu-1", "gcu-1", "amd-1", "br-1", "va-1", "inf-1"} {
			if cl.Node(n) == nil || len(cl.Node(n).GPUs) == 0 {
				return false
			}
		}
		return true
	})

	tests := []struct {
		pod  *corev1.Pod
		node string
		keys []string // annotations that must equal the engine's prediction on that node
	}{
		{xtPod("default", "gpu").GPUs(1).GPUMem(4000).GPUCores(20).Obj(), "nv-1", []string{codec.PodAllocatedAnnotation, codec.PodToAllocateAnnotation}},
		{xtVendorPod("default", "dcu", "hygon.com/dcunum", 2, "hygon.com/dcumem", 8000, "hygon.com/dcucores", 30), "dcu-1",
			[]string{"hami.io/dcu-devices-allocated", "hami.io/dcu-devices-to-allocate"}},
		{xtVendorPod("default", "npu", "huawei.com/Ascend910B3", 1, "huawei.com/Ascend910B3-memory", 3000), "npu-1",
			[]string{"hami.io/Ascend910B3-devices-allocated", "huawei.com/Ascend910B3"}},
		{xtVendorPod("default", "npu-pair", "huawei.com/Ascend910C", 1), "c910-1", []string{"hami.io/Ascend910C-devices-allocated"}},
		{xtVendorPod("default", "mlu", "cambricon.com/mlu", 1, "cambricon.com/mlu.smlu.vmemory", 16), "mlu-1",
			[]string{"hami.io/cambricon-mlu-devices-allocated", "CAMBRICON_DSMLU_PROFILE"}},
		{xtVendorPod("default", "metax", "metax-tech.com/gpu", 1), "mx-1", []string{"hami.io/metax-gpu-devices-allocated"}},
		{xtVendorPod("default", "sgpu", "metax-tech.com/sgpu", 1, "metax-tech.com/vcore", 30, "metax-tech.com/vmemory", 8), "sg-1",
			[]string{"hami.io/metax-sgpu-devices-allocated", "hami.io/metax-sgpu-devices-to-allocate", metaxsgpu.AllocatedAnnotation}},
		{xtVendorPod("default", "ilu", "iluvatar.ai/MR-V100-vgpu", 1, "iluvatar.ai/MR-V100.vMem", 8, "iluvatar.ai/MR-V100.vCore", 25), "ilu-1",
			[]string{"hami.io/MR-V100-devices-allocated"}},
		{xtVendorPod("default", "mthreads", "mthreads.com/vgpu", 1, "mthreads.com/sgpu-memory", 8, "mthreads.com/sgpu-core", 4), "mt-1",
			[]string{"hami.io/mthreads-vgpu-devices-allocated", "mthreads.com/gpu-index", "mthreads.com/predicate-node"}},
		{xtVendorPod("default", "kunlun", "kunlunxin.com/xpu", 2), "kl-1", []string{"hami.io/kunlun-allocated", "BAIDU_COM_DEVICE_IDX"}},
		{xtVendorPod("default", "vxpu", "kunlunxin.com/vxpu", 1, "kunlunxin.com/vxpu-memory", 20000), "xpu-1",
			[]string{"hami.io/xpu-devices-allocated", "hami.io/xpu-devices-to-allocate"}},
		{xtVendorPod("default", "gcu", "enflame.com/gcu", 1), "gcu-1", []string{"hami.io/enflame-gcu-devices-allocated"}},
		{xtVendorPod("default", "amd", "amd.com/gpu", 1, "amd.com/gpumem", 8000, "amd.com/gpucores", 50), "amd-1",
			[]string{"hami.io/amd-devices-allocated", "hami.io/amd-devices-to-allocate"}},
		{xtVendorPod("default", "biren", "birentech.com/gpu", 1), "br-1", []string{"hami.io/Biren-devices-allocated"}},
		{xtVendorPod("default", "vastai", "vastaitech.com/va", 1), "va-1", []string{"hami.io/Vastai-devices-allocated"}},
		{xtVendorPod("default", "neuroncore", "aws.amazon.com/neuroncore", 1), "inf-1",
			[]string{"hami.io/aws-neuron-devices-allocated", "AWS_NEURON_IDS", "NEURON_RESOURCE_TYPE", "aws.amazon.com/predicate-node"}},
	}
	for _, tc := range tests {
		pred := xtPredictor(t, c)
		want := pred.Evaluate(tc.pod, engine.EvalOptions{Now: time.Now(), Nodes: []string{tc.node}})
		if !want.Fits {
			t.Fatalf("test setup: %s does not fit on %s: %s", tc.pod.Name, tc.node, want.Summary)
		}
		if _, err := c.CoreV1().Pods(tc.pod.Namespace).Create(ctx, xtLivePod(tc.pod), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got := xtWaitBound(t, c, tc.pod.Namespace, tc.pod.Name, 30*time.Second)
		if got.Spec.NodeName != tc.node || got.Annotations[codec.PodNodeAnnotation] != tc.node {
			t.Errorf("%s bound to %s (%s %q), want %s", tc.pod.Name, got.Spec.NodeName, codec.PodNodeAnnotation, got.Annotations[codec.PodNodeAnnotation], tc.node)
			continue
		}
		predicted := want.Placement.Annotations(time.Now())
		for _, k := range tc.keys {
			if got.Annotations[k] == "" || got.Annotations[k] != predicted[k] {
				t.Errorf("%s on %s: %s = %q, the engine predicts %q", tc.pod.Name, tc.node, k, got.Annotations[k], predicted[k])
			}
		}
		if tc.node != "nv-1" {
			if v, ok := got.Annotations[codec.PodAllocatedAnnotation]; ok {
				t.Errorf("%s: NVIDIA's %s = %q written for a pod without NVIDIA GPUs", tc.pod.Name, codec.PodAllocatedAnnotation, v)
			}
		}
		t.Logf("%s -> %s %v", tc.pod.Name, got.Spec.NodeName, func() map[string]string {
			m := map[string]string{}
			for _, k := range tc.keys {
				m[k] = got.Annotations[k]
			}
			return m
		}())
	}
	// The extender counts what it placed: the NPU slice is used on npu-1.
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool {
		var used int64
		for _, g := range cl.Node("npu-1").GPUs {
			used += g.UsedMem
		}
		return used == 16384
	})

	// Eight 910B3 NPUs: no node has them. Pending, with HAMi's reason and the numbers.
	big := xtVendorPod("default", "npu-big", "huawei.com/Ascend910B3", 8)
	if _, err := c.CoreV1().Pods("default").Create(ctx, xtLivePod(big), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	xtWaitEvent(t, c, "default", "npu-big", extender.EventReason, []string{"0/16 nodes are available: 16 NodeInsufficientDevice.", "8 NPUs"}, 20*time.Second)
	xtWaitUnschedulable(t, c, "default", "npu-big", "NodeInsufficientDevice")
}
