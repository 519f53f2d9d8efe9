package render

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// TestMainReason: the one-line reason is the gate that rules out the most nodes the pod could use, the later gate
// on a tie; nodes outside the pod's scope (unregistered, type filter, card model) only count when nothing else does.
func TestMainReason(t *testing.T) {
	rc := func(c engine.Code, n int) engine.ReasonCount { return engine.ReasonCount{Code: c, Nodes: n} }
	cases := []struct {
		name    string
		reasons []engine.ReasonCount
		want    engine.Code
	}{
		{"most nodes wins over a later gate (numa-allreduce)",
			[]engine.ReasonCount{rc(engine.CardInsufficientMemory, 1), rc(engine.NodeDevicesNotReady, 1), rc(engine.NodeUnregistered, 1),
				rc(engine.NumaNotFit, 2), rc(engine.NodeInsufficientDevice, 4)}, engine.NodeInsufficientDevice},
		{"type filter is out of scope (llm-serve-2)",
			[]engine.ReasonCount{rc(engine.NodeDevicesNotReady, 1), rc(engine.NodeUnregistered, 1), rc(engine.ResourceQuotaNotFit, 2),
				rc(engine.CardTypeMismatch, 5)}, engine.ResourceQuotaNotFit},
		{"card model is out of scope",
			[]engine.ReasonCount{rc(engine.QueueCardQuotaNotFit, 2), rc(engine.CardModelNotRequested, 5)}, engine.QueueCardQuotaNotFit},
		{"tie: the later gate", []engine.ReasonCount{rc(engine.NumaNotFit, 2), rc(engine.CardInsufficientMemory, 2)}, engine.CardInsufficientMemory},
		{"only out of scope: the most common", []engine.ReasonCount{rc(engine.NodeUnregistered, 1), rc(engine.CardTypeMismatch, 3)}, engine.CardTypeMismatch},
		{"none", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := MainReason(tc.reasons).Code; got != tc.want {
				t.Errorf("MainReason = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCopiesLimit(t *testing.T) {
	cases := []struct {
		name string
		cp   engine.Capacity
		want string
	}{
		{"GPUs full", engine.Capacity{Copies: 3}, ""},
		{"namespace quota", engine.Capacity{Copies: 3, Limit: &engine.Check{Code: engine.ResourceQuotaNotFit, Need: 10000, Have: 8048, Total: 120000,
			Unit: "MiB", Detail: "limits.nvidia.com/gpumem in ResourceQuota gpu-quota"}},
			"The namespace quota is the limit, not the GPUs: one more copy needs 10000 MiB, 8048 of 120000 MiB left (limits.nvidia.com/gpumem in ResourceQuota gpu-quota)."},
		{"queue card quota", engine.Capacity{Copies: 1, Limit: &engine.Check{Code: engine.QueueCardQuotaNotFit,
			Detail: "queue serving: NVIDIA-A100-SXM4-80GB 1 of 1 used, the pod needs 1"}},
			"The queue's card quota is the limit, not the GPUs: queue serving: NVIDIA-A100-SXM4-80GB 1 of 1 used, the pod needs 1."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := CopiesLimit(tc.cp); got != tc.want {
				t.Errorf("CopiesLimit =\n %q\nwant\n %q", got, tc.want)
			}
		})
	}
}

// TestMainReasonOfLeavesOutNodesWithoutTheKind: nodes with none of the pod's device kind (an NPU pod on NVIDIA
// nodes) fail NodeInsufficientDevice with 0 available; like unregistered nodes they explain a node, not the
// wait, so the memory shortfall on the one NPU node is the answer, with the gate's whole count shown.
func TestMainReasonOfLeavesOutNodesWithoutTheKind(t *testing.T) {
	nid := func(node string, have int64) engine.NodeStatus {
		return engine.NodeStatus{Node: node, Code: engine.NodeInsufficientDevice, Check: &engine.Check{Need: 4, Have: have}}
	}
	v := &engine.Verdict{
		Reasons: []engine.ReasonCount{{Code: engine.CardInsufficientMemory, Nodes: 1}, {Code: engine.NodeInsufficientDevice, Nodes: 3}},
	}
	v.SetNodes([]engine.NodeStatus{nid("gpu-1", 0), nid("gpu-2", 0), nid("gpu-3", 0), {Node: "npu-1", Code: engine.CardInsufficientMemory}})
	if got := MainReasonOf(v); got.Code != engine.CardInsufficientMemory || got.Nodes != 1 {
		t.Errorf("MainReasonOf = %+v, want CardInsufficientMemory on 1", got)
	}
	// A node with some of the kind, too few, is in scope: it counts.
	v.Nodes()[0], v.Nodes()[1] = nid("npu-2", 2), nid("npu-3", 2)
	if got := MainReasonOf(v); got.Code != engine.NodeInsufficientDevice || got.Nodes != 3 {
		t.Errorf("MainReasonOf = %+v, want NodeInsufficientDevice on 3 (two nodes with too few NPUs)", got)
	}
	// Only nodes without the kind: the most common reason, as before.
	v.SetNodes(v.Nodes()[:3])
	v.Reasons = v.Reasons[1:]
	v.Nodes()[0], v.Nodes()[1] = nid("gpu-1", 0), nid("gpu-2", 0)
	if got := MainReasonOf(v); got.Code != engine.NodeInsufficientDevice {
		t.Errorf("MainReasonOf = %+v, want NodeInsufficientDevice when nothing is in scope", got)
	}
}

func TestPendingLineSaysTheNomination(t *testing.T) {
	v := &engine.Verdict{Summary: "0/1 nodes are available"}
	if got := PendingLine(v, ""); got != OneLine(v) {
		t.Errorf("PendingLine without a nomination = %q, want OneLine's %q", got, OneLine(v))
	}
	if got, want := PendingLine(v, "gpu-1"), "nominated for gpu-1 (preempted pods leaving) · 0/1 nodes are available"; got != want {
		t.Errorf("PendingLine = %q, want %q", got, want)
	}
}
