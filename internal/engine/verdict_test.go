package engine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// a 12-node cluster where a 20000 MiB request fits nowhere, for the exact rendering of summary and hints.
func twelveNodes() *Cluster {
	var nodes []*corev1.Node
	for _, name := range []string{"node-01", "node-02", "node-03", "node-04", "node-05", "node-06", "node-07", "node-08"} {
		nodes = append(nodes, mkNode(name, gpus(name, 4, 16384)))
	}
	nodes = append(nodes, mkNode("node-09", nil), mkNode("node-10", nil))
	sick := gpus("node-11", 2, 16384)
	sick[0].Health, sick[1].Health = false, false
	nodes = append(nodes, mkNode("node-11", sick))
	nodes = append(nodes, mkNode("node-12", gpus("node-12", 1, 32768)))
	return newTestCluster(nodes, []*corev1.Pod{placedOn(mkPod("ns", "big", tb.MakeContainer("c").GPUs(1).GPUMem(20000).GPUCores(0).Obj()), "node-12", "node-12-g0,NVIDIA,20000,0:;")})
}

func TestVerdictSummaryExplanationHints(t *testing.T) {
	c := twelveNodes()
	v := c.Evaluate(mkPod("ns", "p", tb.MakeContainer("main").GPUs(1).GPUMem(20000).GPUCores(10).Obj()), EvalOptions{})
	if v.Fits {
		t.Fatal("fits")
	}
	if want := "0/12 nodes are available: 1 CardNotHealth, 2 NodeUnregistered, 9 CardInsufficientMemory."; v.Summary != want {
		t.Errorf("summary\n got %q\nwant %q", v.Summary, want)
	}
	wantExpl := []string{
		"container main asks for 1 GPU(s), each with 20000 MiB and 10% cores",
		"CardInsufficientMemory (9 node(s)): needs 20000 MiB on one GPU; the most free on any GPU that passes the earlier gates is 16384 MiB of 16384 (node node-01, GPU 0)",
		"NodeUnregistered (2 node(s)): no GPUs registered in hami.io/node-nvidia-register on node-09, node-10",
		"CardNotHealth (1 node(s)): 2 GPU(s) are registered unhealthy",
	}
	if !reflect.DeepEqual(v.Explanation, wantExpl) {
		t.Errorf("explanation\n got %q\nwant %q", v.Explanation, wantExpl)
	}
	wantHints := []string{"the largest memory request that fits now is 16384 MiB per GPU for 1 GPU(s) (node node-01)"}
	if !reflect.DeepEqual(v.Hints, wantHints) {
		t.Errorf("hints\n got %q\nwant %q", v.Hints, wantHints)
	}
	if ns := v.NodeStatus("node-12"); ns.Reason != "1/1 CardInsufficientMemory" || ns.Example == nil || ns.Example.Result.Have != 12768 {
		t.Errorf("node-12 status %+v: want 12768 MiB free on its GPU", ns)
	}
}

func TestVerdictFitsAndAnnotations(t *testing.T) {
	c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 2, 16384)), mkNode("n2", gpus("n2", 2, 16384))},
		[]*corev1.Pod{placedOn(mkPod("ns", "a", tb.MakeContainer("c").GPUs(1).GPUMem(4000).GPUCores(10).Obj()), "n2", "n2-g1,NVIDIA,4000,10:;")})
	p := mkPod("ns", "p", tb.MakeContainer("main").GPUs(1).GPUMem(2000).GPUCores(30).Obj())
	p.Spec.InitContainers = []corev1.Container{{Name: "setup"}}
	v := c.Evaluate(p, EvalOptions{})
	if !v.Fits || v.Placement.Node != "n2" {
		t.Fatalf("placement %+v, want n2 (binpack prefers the used node)", v.Placement)
	}
	if !reflect.DeepEqual(v.Feasible(), []string{"n2", "n1"}) {
		t.Errorf("feasible %v", v.Feasible())
	}
	// spread GPU policy (default) takes the emptier GPU 0 on n2.
	a := v.Placement.Annotations(time.Unix(1700000000, 0))
	want := map[string]string{
		codec.PodNodeAnnotation: "n2", codec.PodTimeAnnotation: "1700000000", codec.PodBindTimeAnnotation: "1700000000",
		codec.PodBindPhaseAnnotation:  "allocating",
		codec.PodToAllocateAnnotation: ";n2-g0,NVIDIA,2000,30:;", codec.PodAllocatedAnnotation: ";n2-g0,NVIDIA,2000,30:;",
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("annotations\n got %v\nwant %v", a, want)
	}
	if !strings.HasPrefix(v.Summary, "2/2 nodes are available; best: n2") {
		t.Errorf("summary %q", v.Summary)
	}
}

func TestVerdictIsJSONWithStableFields(t *testing.T) {
	v := twelveNodes().Evaluate(mkPod("ns", "p", tb.MakeContainer("main").GPUs(1).GPUMem(20000).GPUCores(10).Obj()), EvalOptions{DetailNodes: []string{"node-01"}})
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"pod", "request", "fits", "summary", "explanation", "reasons", "nodes", "quota", "hints"} {
		if _, ok := back[k]; !ok {
			t.Errorf("verdict JSON lacks %q", k)
		}
	}
	ns := v.NodeStatus("node-01")
	if len(ns.GPUs) != 4 || len(ns.GPUs[0].Checks) == 0 {
		t.Fatalf("detail node lacks per-GPU gate results: %+v", ns)
	}
	// Every gate up to memory passed and memory failed, with numbers.
	var gates []string
	for _, ch := range ns.GPUs[0].Checks {
		gates = append(gates, ch.Gate)
		if ch.Gate == "memory" && (ch.Code != CardInsufficientMemory || ch.Need != 20000 || ch.Have != 16384) {
			t.Errorf("memory check %+v", ch)
		}
	}
	wantGates := []string{"health", "cordon", "type", "uuid", "slots", "mutex", "quota", "memory", "cores", "exclusive", "compute"}
	if !reflect.DeepEqual(gates, wantGates) {
		t.Errorf("gates %v, want %v", gates, wantGates)
	}
	if v.NodeStatus("node-02").GPUs != nil {
		t.Errorf("node-02 was not asked for in detail but carries GPU results")
	}
}

func TestFilterAndCordonHints(t *testing.T) {
	c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 2, 16384), codec.NodeCordonAnnotation, "n1-g1")}, nil)
	v := c.Evaluate(withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), AnnoNoUseGPUUUID, "n1-g0"), EvalOptions{})
	if v.Fits {
		t.Fatal("fits")
	}
	want := []string{
		"1 GPU(s) pass every other gate but are excluded by a cordon (hami.io/device-cordon): n1/GPU 1",
		"1 GPU(s) pass every other gate but are excluded by the pod's UUID filter: n1/GPU 0",
	}
	if !reflect.DeepEqual(v.Hints, want) {
		t.Errorf("hints\n got %q\nwant %q", v.Hints, want)
	}
}

func TestWholeCardDefaultHint(t *testing.T) {
	c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 1, 16384))},
		[]*corev1.Pod{placedOn(mkPod("ns", "a", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), "n1", "n1-g0,NVIDIA,1000,0:;")})
	v := c.Evaluate(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).Obj()), EvalOptions{})
	if v.Fits || len(v.Hints) == 0 || !strings.Contains(v.Hints[0], "asks for 100% of each GPU's memory") {
		t.Fatalf("fits=%v hints %q: want the whole-card default explained", v.Fits, v.Hints)
	}
}

func TestNoGPURequest(t *testing.T) {
	v := twelveNodes().Evaluate(mkPod("ns", "p", corev1.Container{Name: "c"}), EvalOptions{})
	if !v.Fits || !v.NoGPURequest || len(v.Nodes()) != 0 {
		t.Fatalf("verdict %+v", v)
	}
}

func TestHandshakeGrace(t *testing.T) {
	n := mkNode("n1", gpus("n1", 1, 16384), codec.NodeHandshakeAnnotation, codec.FormatHandshakeRequesting(time.Unix(1700000000, 0)))
	n.Status.Allocatable = nil
	c := newTestCluster([]*corev1.Node{n}, nil)
	p := mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj())
	if v := c.Evaluate(p, EvalOptions{Now: time.Unix(1700000030, 0)}); !v.Fits {
		t.Errorf("within the 60 s grace the node should be usable: %s", v.Summary)
	}
	if v := c.Evaluate(p, EvalOptions{Now: time.Unix(1700000090, 0)}); v.Fits || v.Reasons[0].Code != NodeDevicesNotReady {
		t.Errorf("after the grace: %s", v.Summary)
	}
}
