package kubefit

import (
	"math/rand/v2"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

var hamiResources = []string{"nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpucores"}

func TestCheckOneNode(t *testing.T) {
	gpuTaint := withTaint("gpu", "true", corev1.TaintEffectNoSchedule)
	running := func(name string, req corev1.ResourceList) *corev1.Pod {
		return mkPod(name, req, phase(corev1.PodRunning))
	}
	cases := []struct {
		name    string
		pod     *corev1.Pod
		node    *corev1.Node
		bound   []*corev1.Pod
		ignored []string
		want    []Failure
	}{
		// NodeName
		{name: "nodeName matches", pod: mkPod("p", nil, func(p *corev1.Pod) { p.Spec.NodeName = "n1" }),
			node: mkNode("n1", stdAlloc())},
		{name: "nodeName differs", pod: mkPod("p", nil, func(p *corev1.Pod) { p.Spec.NodeName = "n2" }),
			node: mkNode("n1", stdAlloc()),
			want: []Failure{{CheckNodeName, "node(s) didn't match the requested node name", `pod asks for node "n2" by spec.nodeName`}}},

		// NodeUnschedulable
		{name: "cordoned node", pod: mkPod("p", nil), node: mkNode("n1", stdAlloc(), cordoned),
			want: []Failure{{CheckNodeUnschedulable, "node(s) were unschedulable",
				"node is cordoned (spec.unschedulable) and the pod does not tolerate node.kubernetes.io/unschedulable:NoSchedule"}}},
		{name: "cordoned node, unschedulable taint tolerated",
			pod:  mkPod("p", nil, tolerate(corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})),
			node: mkNode("n1", stdAlloc(), cordoned)},

		// NodeAffinity
		{name: "nodeSelector matches", pod: mkPod("p", nil, nodeSelector("gpu", "a100")),
			node: mkNode("n1", stdAlloc(), withLabels("gpu", "a100", "zone", "a"))},
		{name: "nodeSelector value differs", pod: mkPod("p", nil, nodeSelector("gpu", "a100", "zone", "a")),
			node: mkNode("n1", stdAlloc(), withLabels("gpu", "t4", "zone", "a")),
			want: []Failure{{CheckNodeAffinity, "node(s) didn't match Pod's node affinity/selector", "nodeSelector gpu=a100 (node has t4)"}}},
		{name: "nodeSelector label missing", pod: mkPod("p", nil, nodeSelector("gpu", "a100")),
			node: mkNode("n1", stdAlloc()),
			want: []Failure{{CheckNodeAffinity, "node(s) didn't match Pod's node affinity/selector", "nodeSelector gpu=a100 (node has no gpu label)"}}},
		{name: "required affinity In matches",
			pod:  mkPod("p", nil, requiredAffinity(corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}})),
			node: mkNode("n1", stdAlloc(), withLabels("zone", "b"))},
		{name: "required affinity NotIn fails",
			pod:  mkPod("p", nil, requiredAffinity(corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"b"}})),
			node: mkNode("n1", stdAlloc(), withLabels("zone", "b")),
			want: []Failure{{CheckNodeAffinity, "node(s) didn't match Pod's node affinity/selector",
				"required node affinity matches no term for the node's labels and fields"}}},
		{name: "required affinity matchFields metadata.name matches",
			pod:  mkPod("p", nil, requiredAffinity(corev1.NodeSelectorRequirement{}, corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}})),
			node: mkNode("n1", stdAlloc())},
		{name: "required affinity matchFields metadata.name differs",
			pod:  mkPod("p", nil, requiredAffinity(corev1.NodeSelectorRequirement{}, corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}})),
			node: mkNode("n1", stdAlloc()),
			want: []Failure{{CheckNodeAffinity, "node(s) didn't match Pod's node affinity/selector",
				"required node affinity matches no term for the node's labels and fields"}}},

		// TaintToleration
		{name: "NoSchedule taint untolerated", pod: mkPod("p", nil), node: mkNode("n1", stdAlloc(), gpuTaint),
			want: []Failure{{CheckTaintToleration, "node(s) had untolerated taint(s)", "the pod does not tolerate taint gpu=true:NoSchedule"}}},
		{name: "NoExecute taint without value untolerated", pod: mkPod("p", nil),
			node: mkNode("n1", stdAlloc(), withTaint("dedicated", "", corev1.TaintEffectNoExecute)),
			want: []Failure{{CheckTaintToleration, "node(s) had untolerated taint(s)", "the pod does not tolerate taint dedicated:NoExecute"}}},
		{name: "PreferNoSchedule taint is not a filter", pod: mkPod("p", nil),
			node: mkNode("n1", stdAlloc(), withTaint("gpu", "true", corev1.TaintEffectPreferNoSchedule))},
		{name: "taint tolerated by Exists", pod: mkPod("p", nil, tolerate(corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists})),
			node: mkNode("n1", stdAlloc(), gpuTaint)},
		{name: "taint tolerated by Equal", pod: mkPod("p", nil, tolerate(corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule})),
			node: mkNode("n1", stdAlloc(), gpuTaint)},
		{name: "toleration with another value", pod: mkPod("p", nil, tolerate(corev1.Toleration{Key: "gpu", Value: "false"})),
			node: mkNode("n1", stdAlloc(), gpuTaint),
			want: []Failure{{CheckTaintToleration, "node(s) had untolerated taint(s)", "the pod does not tolerate taint gpu=true:NoSchedule"}}},
		{name: "first untolerated taint is reported", pod: mkPod("p", nil, tolerate(corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists})),
			node: mkNode("n1", stdAlloc(), gpuTaint, withTaint("team", "ml", corev1.TaintEffectNoSchedule), withTaint("zone", "x", corev1.TaintEffectNoExecute)),
			want: []Failure{{CheckTaintToleration, "node(s) had untolerated taint(s)", "the pod does not tolerate taint team=ml:NoSchedule"}}},

		// NodeResourcesFit
		{name: "cpu short", pod: mkPod("p", rl("cpu", "4")), node: mkNode("n1", stdAlloc()),
			bound: []*corev1.Pod{running("a", rl("cpu", "6")), running("b", rl("cpu", "500m"))},
			want:  []Failure{{CheckNodeResourcesFit, "Insufficient cpu", "needs cpu 4, 1500m free of 8 allocatable"}}},
		{name: "cpu fits exactly", pod: mkPod("p", rl("cpu", "1500m")), node: mkNode("n1", stdAlloc()),
			bound: []*corev1.Pod{running("a", rl("cpu", "6")), running("b", rl("cpu", "500m"))}},
		{name: "memory short", pod: mkPod("p", rl("cpu", "1", "memory", "4Gi")), node: mkNode("n1", stdAlloc()),
			bound: []*corev1.Pod{running("a", rl("memory", "30Gi"))},
			want:  []Failure{{CheckNodeResourcesFit, "Insufficient memory", "needs memory 4Gi, 2Gi free of 32Gi allocatable"}}},
		{name: "ephemeral-storage short", pod: mkPod("p", rl("ephemeral-storage", "200Gi")), node: mkNode("n1", stdAlloc()),
			want: []Failure{{CheckNodeResourcesFit, "Insufficient ephemeral-storage", "needs ephemeral-storage 200Gi, 100Gi free of 100Gi allocatable"}}},
		{name: "too many pods", pod: mkPod("p", nil), node: mkNode("n1", rl("cpu", "8", "pods", "2")),
			bound: []*corev1.Pod{running("a", nil), mkPod("b", nil)},
			want:  []Failure{{CheckNodeResourcesFit, "Too many pods", "needs pods 1, 0 free of 2 allocatable (2 pods on the node)"}}},
		{name: "every short resource is listed, in kube-scheduler's order",
			pod:   mkPod("p", rl("example.com/fpga", "1", "hugepages-2Mi", "1Gi", "memory", "1Gi", "cpu", "2")),
			node:  mkNode("n1", rl("cpu", "1", "memory", "512Mi", "pods", "1", "example.com/fpga", "1", "hugepages-2Mi", "512Mi")),
			bound: []*corev1.Pod{running("a", rl("example.com/fpga", "1"))},
			want: []Failure{
				{CheckNodeResourcesFit, "Too many pods", "needs pods 1, 0 free of 1 allocatable (1 pods on the node)"},
				{CheckNodeResourcesFit, "Insufficient cpu", "needs cpu 2, 1 free of 1 allocatable"},
				{CheckNodeResourcesFit, "Insufficient memory", "needs memory 1Gi, 512Mi free of 512Mi allocatable"},
				{CheckNodeResourcesFit, "Insufficient example.com/fpga", "needs example.com/fpga 1, 0 free of 1 allocatable"},
				{CheckNodeResourcesFit, "Insufficient hugepages-2Mi", "needs hugepages-2Mi 1Gi, 512Mi free of 512Mi allocatable"},
			}},
		{name: "extended resource the node does not advertise", pod: mkPod("p", rl("example.com/fpga", "1")), node: mkNode("n1", stdAlloc()),
			want: []Failure{{CheckNodeResourcesFit, "Insufficient example.com/fpga", "needs example.com/fpga 1, 0 free of 0 allocatable"}}},
		{name: "HAMi resources are ignored", pod: mkPod("p", rl("cpu", "1", "nvidia.com/gpu", "2", "nvidia.com/gpumem", "4000")),
			node: mkNode("n1", stdAlloc()), ignored: hamiResources},
		{name: "HAMi resources are ignored even where the node advertises them", pod: mkPod("p", rl("nvidia.com/gpu", "2")),
			node: mkNode("n1", rl("pods", "110", "nvidia.com/gpu", "10")), ignored: hamiResources,
			bound: []*corev1.Pod{running("a", rl("nvidia.com/gpu", "10"))}},
		{name: "HAMi resources are checked when not ignored", pod: mkPod("p", rl("cpu", "1", "nvidia.com/gpumem", "4000", "nvidia.com/gpu", "2")),
			node: mkNode("n1", stdAlloc(), func(n *corev1.Node) { n.Status.Allocatable["nvidia.com/gpu"] = rl("g", "1")["g"] }),
			want: []Failure{
				{CheckNodeResourcesFit, "Insufficient nvidia.com/gpu", "needs nvidia.com/gpu 2, 1 free of 1 allocatable"},
				{CheckNodeResourcesFit, "Insufficient nvidia.com/gpumem", "needs nvidia.com/gpumem 4k, 0 free of 0 allocatable"},
			}},
		{name: "short extended resources are sorted by name",
			pod:  mkPod("p", rl("example.com/d", "1", "example.com/b", "1", "example.com/c", "1", "example.com/a", "1")),
			node: mkNode("n1", stdAlloc()),
			want: []Failure{
				{CheckNodeResourcesFit, "Insufficient example.com/a", "needs example.com/a 1, 0 free of 0 allocatable"},
				{CheckNodeResourcesFit, "Insufficient example.com/b", "needs example.com/b 1, 0 free of 0 allocatable"},
				{CheckNodeResourcesFit, "Insufficient example.com/c", "needs example.com/c 1, 0 free of 0 allocatable"},
				{CheckNodeResourcesFit, "Insufficient example.com/d", "needs example.com/d 1, 0 free of 0 allocatable"},
			}},
		{name: "init container larger than the app containers sets the request",
			pod:   mkPod("p", rl("cpu", "1"), initContainer(rl("cpu", "4"), false)),
			node:  mkNode("n1", stdAlloc()),
			bound: []*corev1.Pod{running("a", rl("cpu", "5"))},
			want:  []Failure{{CheckNodeResourcesFit, "Insufficient cpu", "needs cpu 4, 3 free of 8 allocatable"}}},
		{name: "init container smaller than the app containers does not add",
			pod:   mkPod("p", rl("cpu", "3"), initContainer(rl("cpu", "2"), false)),
			node:  mkNode("n1", stdAlloc()),
			bound: []*corev1.Pod{running("a", rl("cpu", "5"))}},
		{name: "sidecar init container adds to the app containers",
			pod:   mkPod("p", rl("cpu", "2"), initContainer(rl("cpu", "2"), true)),
			node:  mkNode("n1", stdAlloc()),
			bound: []*corev1.Pod{running("a", rl("cpu", "5"))},
			want:  []Failure{{CheckNodeResourcesFit, "Insufficient cpu", "needs cpu 4, 3 free of 8 allocatable"}}},
		{name: "pod overhead adds to the request",
			pod:   mkPod("p", rl("cpu", "3"), func(p *corev1.Pod) { p.Spec.Overhead = rl("cpu", "500m") }),
			node:  mkNode("n1", stdAlloc()),
			bound: []*corev1.Pod{running("a", rl("cpu", "5"))},
			want:  []Failure{{CheckNodeResourcesFit, "Insufficient cpu", "needs cpu 3500m, 3 free of 8 allocatable"}}},
		{name: "init containers of bound pods count through PodRequests too",
			pod:   mkPod("p", rl("cpu", "3")),
			node:  mkNode("n1", stdAlloc()),
			bound: []*corev1.Pod{mkPod("a", rl("cpu", "1"), initContainer(rl("cpu", "6"), false), phase(corev1.PodRunning))},
			want:  []Failure{{CheckNodeResourcesFit, "Insufficient cpu", "needs cpu 3, 2 free of 8 allocatable"}}},
		{name: "Succeeded and Failed pods do not count", pod: mkPod("p", rl("cpu", "4")), node: mkNode("n1", rl("cpu", "8", "pods", "2")),
			bound: []*corev1.Pod{
				mkPod("done", rl("cpu", "6"), phase(corev1.PodSucceeded)),
				mkPod("crashed", rl("cpu", "6"), phase(corev1.PodFailed)),
				running("a", rl("cpu", "4")),
			}},
		{name: "Pending bound pods count", pod: mkPod("p", rl("cpu", "4")), node: mkNode("n1", rl("cpu", "8", "pods", "2")),
			bound: []*corev1.Pod{mkPod("starting", rl("cpu", "6"), phase(corev1.PodPending))},
			want:  []Failure{{CheckNodeResourcesFit, "Insufficient cpu", "needs cpu 4, 2 free of 8 allocatable"}}},
		{name: "the pod itself among the bound pods does not count", pod: mkPod("p", rl("cpu", "6")), node: mkNode("n1", rl("cpu", "8", "pods", "1")),
			bound: []*corev1.Pod{mkPod("p", rl("cpu", "6"))}},
		// A missing resource is zero, but a missing pods count is a hand-written snapshot's omission: unchecked.
		{name: "nil allocatable is zero", pod: mkPod("p", rl("cpu", "100m")), node: mkNode("n1", nil),
			want: []Failure{
				{CheckNodeResourcesFit, "Insufficient cpu", "needs cpu 100m, 0 free of 0 allocatable"},
			}},
		{name: "allocatable pods 0 is full", pod: mkPod("p", nil), node: mkNode("n1", corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}),
			want: []Failure{
				{CheckNodeResourcesFit, "Too many pods", "needs pods 1, 0 free of 0 allocatable (0 pods on the node)"},
			}},

		// Several checks at once, in kube-scheduler's order.
		{name: "every failing check is listed in order",
			pod:  mkPod("p", rl("cpu", "16"), nodeSelector("gpu", "a100"), func(p *corev1.Pod) { p.Spec.NodeName = "other" }),
			node: mkNode("n1", stdAlloc(), cordoned, gpuTaint),
			want: []Failure{
				{CheckNodeUnschedulable, "node(s) were unschedulable", "node is cordoned (spec.unschedulable) and the pod does not tolerate node.kubernetes.io/unschedulable:NoSchedule"},
				{CheckNodeName, "node(s) didn't match the requested node name", `pod asks for node "other" by spec.nodeName`},
				{CheckTaintToleration, "node(s) had untolerated taint(s)", "the pod does not tolerate taint gpu=true:NoSchedule"},
				{CheckNodeAffinity, "node(s) didn't match Pod's node affinity/selector", "nodeSelector gpu=a100 (node has no gpu label)"},
				{CheckNodeResourcesFit, "Insufficient cpu", "needs cpu 16, 8 free of 8 allocatable"},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(tc.pod, []*corev1.Node{tc.node}, map[string][]*corev1.Pod{tc.node.Name: tc.bound}, tc.ignored)
			want := []NodeResult{{Node: tc.node.Name, Failures: tc.want}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Check:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestCheckKeepsNodeOrderAndAccountsPerNode(t *testing.T) {
	pod := mkPod("p", rl("cpu", "2"))
	nodes := []*corev1.Node{mkNode("c", stdAlloc()), nil, mkNode("a", stdAlloc()), mkNode("b", stdAlloc())}
	bound := map[string][]*corev1.Pod{
		"a": {mkPod("x", rl("cpu", "7"), phase(corev1.PodRunning))},
		"z": {mkPod("y", rl("cpu", "8"), phase(corev1.PodRunning))}, // not a node in the list
	}
	got := Check(pod, nodes, bound, nil)
	want := []NodeResult{
		{Node: "c"},
		{},
		{Node: "a", Failures: []Failure{{CheckNodeResourcesFit, "Insufficient cpu", "needs cpu 2, 1 free of 8 allocatable"}}},
		{Node: "b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Check:\n got %+v\nwant %+v", got, want)
	}
}

func TestPodWithoutRequestsFitsEverywhere(t *testing.T) {
	nodes := []*corev1.Node{
		mkNode("empty", stdAlloc()),
		mkNode("full", rl("cpu", "1", "memory", "1Gi", "pods", "110")),
		mkNode("no-memory", rl("cpu", "8", "pods", "110")),
	}
	bound := map[string][]*corev1.Pod{"full": {
		mkPod("x", rl("cpu", "1", "memory", "1Gi"), phase(corev1.PodRunning)),
		mkPod("y", rl("cpu", "1", "memory", "1Gi"), phase(corev1.PodRunning)), // overcommitted
	}}
	for _, pod := range []*corev1.Pod{mkPod("p", nil), mkPod("p", corev1.ResourceList{}), nil} {
		for _, r := range Check(pod, nodes, bound, hamiResources) {
			if len(r.Failures) != 0 {
				t.Errorf("node %s: want no failures, got %+v", r.Node, r.Failures)
			}
		}
	}
	if s := Summary(Check(mkPod("p", nil), nodes, bound, nil)); s != "" {
		t.Errorf("Summary = %q, want empty", s)
	}
}

// TestRequestsIsPodRequests: the common case's sum gives what k8s.io/component-helpers' PodRequests gives,
// for random pods with and without init containers, sidecars, overhead and pod-level resources.
func TestRequestsIsPodRequests(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 28))
	names := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "nvidia.com/gpu", corev1.ResourceEphemeralStorage}
	list := func() corev1.ResourceList {
		l := corev1.ResourceList{}
		for _, n := range names {
			if rng.IntN(2) == 0 {
				l[n] = *resource.NewMilliQuantity(int64(rng.IntN(4000)), resource.DecimalSI)
			}
		}
		return l
	}
	always := corev1.ContainerRestartPolicyAlways
	fast := 0
	for round := 0; round < 2000; round++ {
		pod := &corev1.Pod{}
		for i := rng.IntN(4); i > 0; i-- {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Resources: corev1.ResourceRequirements{Requests: list()}})
		}
		if rng.IntN(3) == 0 {
			c := corev1.Container{Resources: corev1.ResourceRequirements{Requests: list()}}
			if rng.IntN(2) == 0 {
				c.RestartPolicy = &always
			}
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
		}
		if rng.IntN(5) == 0 {
			pod.Spec.Overhead = list()
		}
		if rng.IntN(5) == 0 {
			pod.Spec.Resources = &corev1.ResourceRequirements{Requests: list()}
		}
		if len(pod.Spec.InitContainers) == 0 && pod.Spec.Overhead == nil && pod.Spec.Resources == nil {
			fast++
		}
		got, want := Requests(pod), resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		if len(got) != len(want) {
			t.Fatalf("round %d: %v, PodRequests %v", round, got, want)
		}
		for n, q := range want {
			if g, ok := got[n]; !ok || g.Cmp(q) != 0 {
				t.Fatalf("round %d: %s is %v, PodRequests %v", round, n, got[n], q)
			}
		}
	}
	if fast < 500 {
		t.Errorf("only %d of 2000 pods took the common path: the generator tests too little", fast)
	}
}
