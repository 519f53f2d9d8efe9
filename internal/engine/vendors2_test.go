package engine

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/engine/codec"
)

// capNode is a node whose device plugin registers no annotation: its devices come from status.capacity.
func capNode(name string, kv ...any) *corev1.Node {
	n := mkNode(name, nil)
	n.Status.Capacity = corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Status.Capacity[corev1.ResourceName(kv[i].(string))] = *resource.NewQuantity(int64(kv[i+1].(int)), resource.DecimalSI)
	}
	return n
}

// counted places p on node with the device list under key, as a bound pod.
func counted(p *corev1.Pod, node, key, val string) *corev1.Pod {
	p.Annotations[codec.PodNodeAnnotation] = node
	p.Annotations[key] = val
	p.Spec.NodeName = node
	return p
}

type vendorCase struct {
	name   string
	quota  corev1.ResourceList
	nodes  []*corev1.Node
	pods   []*corev1.Pod
	pod    *corev1.Pod
	fits   bool
	code   Code
	annos  map[string]string // wanted placement annotations (subset)
	absent []string
	// gpuDetail is wanted in some device's result on the first node.
	gpuDetail string
}

func runVendorCases(t *testing.T, tests []vendorCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCluster(DefaultConfig())
			if tc.quota != nil {
				c.SetQuota(&corev1.ResourceQuota{ObjectMeta: mkPod("ns", "q").ObjectMeta, Spec: corev1.ResourceQuotaSpec{Hard: tc.quota}})
			}
			for _, n := range tc.nodes {
				if probs := c.SetNode(n); len(probs) > 0 {
					t.Fatalf("node problems: %v", probs)
				}
			}
			for _, p := range tc.pods {
				if probs := c.SetPod(p); len(probs) > 0 {
					t.Fatalf("pod problems: %v", probs)
				}
			}
			v := c.Evaluate(tc.pod, EvalOptions{DetailAll: true})
			if tc.gpuDetail != "" {
				found := false
				for _, g := range v.Nodes[0].GPUs {
					found = found || strings.Contains(g.Result.Detail, tc.gpuDetail)
				}
				if !found {
					t.Errorf("no device says %q: %+v", tc.gpuDetail, v.Nodes[0].GPUs)
				}
			}
			if v.Fits != tc.fits {
				t.Fatalf("fits = %v, want %v: %s %v", v.Fits, tc.fits, v.Summary, v.Reasons)
			}
			if !tc.fits {
				if len(v.Reasons) != 1 || v.Reasons[0].Code != tc.code {
					t.Fatalf("reasons %v, want %s: %s", v.Reasons, tc.code, v.Summary)
				}
				return
			}
			got := v.Placement.Annotations(testTime)
			for k, want := range tc.annos {
				if got[k] != want {
					t.Errorf("%s = %q, want %q", k, got[k], want)
				}
			}
			for _, k := range tc.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s is written", k)
				}
			}
		})
	}
}

const (
	mtNum, mtMem, mtCores = "mthreads.com/vgpu", "mthreads.com/sgpu-memory", "mthreads.com/sgpu-core"
	mtAlloc               = "hami.io/mthreads-vgpu-devices-allocated"
)

// TestMthreadsGates are HAMi v2.10's Mthreads cases (pkg/device/mthreads/device_test.go: TestDevices_Fit,
// Test_CustomFilterRule, Test_MutateAdmission, Test_PatchAnnotations) as whole-pod evaluations on nodes whose
// GPUs come from their capacity: m1 has two 4096 MiB GPUs (32 cores, 16 memory units), s1 eight S4000s.
func TestMthreadsGates(t *testing.T) {
	m1 := func() *corev1.Node { return capNode("m1", mtCores, 32, mtMem, 16) }
	s1 := func() *corev1.Node { return capNode("s1", mtCores, 128, mtMem, 768) }
	runVendorCases(t, []vendorCase{
		{name: "fit success: memory in 512 MiB units, cores in sixteenths", nodes: []*corev1.Node{m1()},
			pod:  mkPod("ns", "p", vctr("c", mtNum, 1, mtMem, 2, mtCores, 8)),
			fits: true, annos: map[string]string{mtAlloc: "m1-mthreads-1,Mthreads,1024,8:;", "mthreads.com/gpu-index": "1",
				"mthreads.com/predicate-node": "m1", "mthreads.com/predicate-time": "1700000000000000000"},
			absent: []string{"hami.io/mthreads-vgpu-devices-to-allocate", codec.PodAllocatedAnnotation}},
		{name: "fit fail: memory not enough", nodes: []*corev1.Node{m1()},
			pod: mkPod("ns", "p", vctr("c", mtNum, 1, mtMem, 16, mtCores, 8)), code: CardInsufficientMemory},
		{name: "fit fail: core not enough", nodes: []*corev1.Node{m1()},
			pods: []*corev1.Pod{counted(mkPod("ns", "a", vctr("c", mtNum, 2)), "m1", mtAlloc, "m1-mthreads-0,Mthreads,1024,16:m1-mthreads-1,Mthreads,1024,16:;")},
			pod:  mkPod("ns", "p", vctr("c", mtNum, 1, mtMem, 2, mtCores, 8)), code: CardInsufficientCore},
		{name: "fit fail: user assign use uuid mismatch", nodes: []*corev1.Node{m1()},
			pod:  withAnno(mkPod("ns", "p", vctr("c", mtNum, 1, mtMem, 2, mtCores, 8)), "mthreads.ai/use-gpuuuid", "dev-0"),
			code: CardUUIDMismatch},
		{name: "webhook: two GPUs are taken whole, 16 cores and 96 units each", nodes: []*corev1.Node{s1()},
			pod:  mkPod("ns", "p", vctr("c", mtNum, 2, mtMem, 2, mtCores, 1)),
			fits: true, annos: map[string]string{mtAlloc: "s1-mthreads-7,Mthreads,49152,16:s1-mthreads-6,Mthreads,49152,16:;", "mthreads.com/gpu-index": "7,6"}},
		{name: "webhook: one GPU without memory is taken whole", nodes: []*corev1.Node{s1()},
			pod:  mkPod("ns", "p", vctr("c", mtNum, 1, mtCores, 1)),
			fits: true, annos: map[string]string{mtAlloc: "s1-mthreads-7,Mthreads,49152,16:;"}},
		{name: "customFilterRule: a pod's containers share one GPU", nodes: []*corev1.Node{m1()},
			pod: func() *corev1.Pod {
				p := mkPod("ns", "p", vctr("a", mtNum, 1, mtMem, 2, mtCores, 4), vctr("b", mtNum, 1, mtMem, 2, mtCores, 4))
				return p
			}(),
			fits: true, annos: map[string]string{mtAlloc: "m1-mthreads-1,Mthreads,1024,4:;m1-mthreads-1,Mthreads,1024,4:;"}},
		{name: "customFilterRule: the other GPU is refused when the first is full", nodes: []*corev1.Node{m1()},
			pod:  mkPod("ns", "p", vctr("a", mtNum, 1, mtMem, 8, mtCores, 4), vctr("b", mtNum, 1, mtMem, 2, mtCores, 4)),
			code: CardInsufficientMemory, gpuDetail: "an earlier container of the pod took m1-mthreads-1"},
	})
}

// TestMthreadsQuota: a counted Mthreads pod charges limits.mthreads.com/sgpu-memory in MiB (HAMi's quota keys
// are accounted for every type), without gating the Fit.
func TestMthreadsQuota(t *testing.T) {
	c := NewCluster(DefaultConfig())
	c.SetNode(capNode("m1", mtCores, 32, mtMem, 16))
	c.SetQuota(&corev1.ResourceQuota{ObjectMeta: mkPod("team", "q").ObjectMeta,
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"limits." + mtMem: *resource.NewQuantity(4, resource.DecimalSI)}}})
	if probs := c.SetPod(counted(mkPod("team", "a", vctr("c", mtNum, 1, mtMem, 2, mtCores, 8)), "m1", mtAlloc, "m1-mthreads-0,Mthreads,1024,8:;")); len(probs) > 0 {
		t.Fatal(probs)
	}
	q := c.Quota("team")
	var found bool
	for _, d := range q.Devices {
		if d.Resource == "limits."+mtMem {
			found = true
			if d.Used != 1024 || d.Limit != 2048 {
				t.Errorf("quota line %+v, want 1024 of 2048 MiB", d)
			}
		}
	}
	if !found {
		t.Fatalf("no quota line for %s: %+v", mtMem, q)
	}
}
