package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// testTime is the evaluation and bind time of the tests.
var testTime = time.Unix(1700000000, 0)

// vendorNode is a node registering devs in the register annotation key (no NVIDIA annotation).
func vendorNode(name, key string, devs []codec.DeviceInfo, annos ...string) *corev1.Node {
	n := mkNode(name, nil, annos...)
	n.Annotations[key] = codec.FormatNodeRegister(devs)
	return n
}

// vdevs is n devices of a type named <node>-<word><i>, with memory, cores and slots.
func vdevs(node, word, typ string, n int, mem, cores int64, slots int32) []codec.DeviceInfo {
	out := make([]codec.DeviceInfo, n)
	for i := range out {
		out[i] = codec.DeviceInfo{ID: fmt.Sprintf("%s-%s%d", node, word, i), Index: i, Count: slots, Devmem: mem, Devcore: cores, Type: typ, Health: true}
	}
	return out
}

// vctr is a container asking for resources by name (value < 0 leaves it out).
func vctr(name string, kv ...any) corev1.Container {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i].(string))] = *resource.NewQuantity(int64(kv[i+1].(int)), resource.DecimalSI)
	}
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Limits: l}}
}

const (
	dcuReg   = "hami.io/node-dcu-register"
	b3Reg    = "hami.io/node-register-Ascend910B3"
	dcuNum   = "hygon.com/dcunum"
	dcuMem   = "hygon.com/dcumem"
	dcuCores = "hygon.com/dcucores"
	b3       = "huawei.com/Ascend910B3"
	b3Mem    = "huawei.com/Ascend910B3-memory"
	dcuAlloc = "hami.io/dcu-devices-allocated"
	b3Alloc  = "hami.io/Ascend910B3-devices-allocated"
)

// TestCrossFamilyNodes: a pod of one family finds no device on a node of another; each kind's walk sees only
// its own devices.
func TestCrossFamilyNodes(t *testing.T) {
	dcu := vendorNode("d1", dcuReg, vdevs("d1", "dcu", "DCU-Z100", 2, 32768, 100, 4))
	for _, tc := range []struct {
		name string
		node *corev1.Node
		pod  *corev1.Pod
	}{
		{"NVIDIA pod on a DCU-only node", dcu, mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj())},
		{"DCU pod on an NVIDIA node", mkNode("n1", gpus("n1", 2, 16384)), mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 1000))},
	} {
		v := newTestCluster([]*corev1.Node{tc.node}, nil).Evaluate(tc.pod, EvalOptions{Now: testTime})
		if v.Fits || len(v.Reasons) != 1 || v.Reasons[0].Code != NodeInsufficientDevice {
			t.Errorf("%s: fits %v, reasons %v; want NodeInsufficientDevice", tc.name, v.Fits, v.Reasons)
		}
	}
}

// TestTwoTypesInOneContainer: a container naming the resources of two families is reported and read as the
// first family's in Config.Kinds order (NVIDIA's: its default cores, 0).
func TestTwoTypesInOneContainer(t *testing.T) {
	req, probs := ParseRequest(mkPod("ns", "p", vctr("c", "nvidia.com/gpu", 1, dcuNum, 1)), DefaultConfig())
	if len(req.Containers) != 1 {
		t.Fatalf("containers %+v", req.Containers)
	}
	r := req.Containers[0]
	if got := fmt.Sprintf("%d %d/%d %d %s %s", r.Count, r.MemoryMiB, r.MemoryPercent, r.Cores, r.Device, r.Template); got != "1 0/100 0  " {
		t.Errorf("request %q, want %q", got, "1 0/100 0  ")
	}
	if len(probs) != 1 || !strings.Contains(probs[0].Message, "two device types") {
		t.Errorf("problems %v, want one naming two device types", probs)
	}
}

// TestVendorRegisterProblems: a broken vendor annotation names its key and leaves the node's other types.
func TestVendorRegisterProblems(t *testing.T) {
	c := NewCluster(DefaultConfig())
	n := mkNode("m1", gpus("m1", 1, 16384))
	n.Annotations[dcuReg] = `[{"id":"x","devmem":-1}]`
	probs := c.SetNode(n)
	if len(probs) != 1 || !strings.Contains(probs[0].Field, dcuReg) || !strings.Contains(probs[0].Message, dcuReg) {
		t.Fatalf("problems %+v", probs)
	}
	if node := c.Node("m1"); !node.Registered || len(node.GPUs) != 1 {
		t.Fatalf("node %+v", node)
	}
	// A mixed node: one GPU and two DCUs, each kind walked on its own.
	n.Annotations[dcuReg] = codec.FormatNodeRegister(vdevs("m1", "dcu", "DCU", 2, 16384, 100, 4))
	c.SetNode(n)
	if node := c.Node("m1"); node.DevicesOf(0) != 1 || node.DevicesOf(1) != 2 {
		t.Fatalf("kinds %d %d", node.DevicesOf(0), node.DevicesOf(1))
	}
	v := c.Evaluate(mkPod("ns", "p", tb.MakeContainer("c").GPUs(2).GPUMem(1000).Obj()), EvalOptions{})
	if v.Fits || v.Reasons[0].Code != NodeInsufficientDevice {
		t.Fatalf("two GPUs on a node with one GPU and two DCUs: %v", v.Reasons)
	}
	v = c.Evaluate(mkPod("ns", "p", vctr("c", dcuNum, 2, dcuMem, 1000)), EvalOptions{})
	if !v.Fits {
		t.Fatalf("two DCUs: %s", v.Summary)
	}
	b, _ := json.Marshal(v.Placement.Containers)
	if !strings.Contains(string(b), `"device":"DCU"`) {
		t.Fatalf("placement %s", b)
	}
}

// TestUnregisteredSpeaksOfThePodsType: a node with no devices is unregistered for every pod, but the detail
// names the annotation of the type the pod asks for.
func TestUnregisteredSpeaksOfThePodsType(t *testing.T) {
	c := newTestCluster([]*corev1.Node{mkNode("cpu", nil)}, nil)
	for _, tc := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{mkPod("ns", "gpu", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), "no hami.io/node-nvidia-register annotation: the node component has not registered GPUs"},
		{mkPod("ns", "dcu", vctr("c", dcuNum, 1, dcuMem, 1000)), "no hami.io/node-dcu-register annotation: the device plugin has not registered DCUs"},
		{mkPod("ns", "npu", vctr("c", b3, 1)), "no hami.io/node-register-Ascend910B3 annotation: the device plugin has not registered NPUs"},
	} {
		v := c.Evaluate(tc.pod, EvalOptions{Now: testTime})
		if len(v.Nodes()) != 1 || v.Nodes()[0].Check == nil || v.Nodes()[0].Code != NodeUnregistered || v.Nodes()[0].Check.Detail != tc.want {
			t.Errorf("%s: node status %+v, want NodeUnregistered %q", tc.pod.Name, v.Nodes(), tc.want)
		}
	}
}
