package engine

import "testing"

// TestMainReason is the one rule of "the main reason", table by table: of the nodes the pod could use, the gate
// that rules out the most, the later gate on a tie; nodes outside the pod's scope (unregistered, not serving, the
// type, UUID or card model it does not name, a selector or node name that rules the node out, none of its device
// kind) only count when nothing else does. Blocker, a fix's "then", names the same reason with a node showing it.
func TestMainReason(t *testing.T) {
	rc := func(c Code, n int) ReasonCount { return ReasonCount{Code: c, Nodes: n} }
	node := func(name string, c Code) NodeStatus { return NodeStatus{Node: name, Code: c} }
	kindless := func(name string) NodeStatus {
		return NodeStatus{Node: name, Code: NodeInsufficientDevice, Check: &Check{Need: 4, Have: 0}}
	}
	tooFew := func(name string) NodeStatus {
		return NodeStatus{Node: name, Code: NodeInsufficientDevice, Check: &Check{Need: 4, Have: 2}}
	}
	cases := []struct {
		name    string
		nodes   []NodeStatus
		reasons []ReasonCount
		want    ReasonCount
		blocker string
	}{
		{"most nodes wins over a later gate",
			[]NodeStatus{node("a", CardInsufficientMemory), node("b", NumaNotFit), node("c", NumaNotFit), tooFew("d"), tooFew("e"), tooFew("f")},
			[]ReasonCount{rc(CardInsufficientMemory, 1), rc(NumaNotFit, 2), rc(NodeInsufficientDevice, 3)},
			rc(NodeInsufficientDevice, 3), "NodeInsufficientDevice on d"},
		{"tie: the later gate, the one closest to fitting",
			[]NodeStatus{node("a", NumaNotFit), node("b", CardInsufficientMemory), node("c", NumaNotFit), node("d", CardInsufficientMemory)},
			[]ReasonCount{rc(NumaNotFit, 2), rc(CardInsufficientMemory, 2)},
			rc(CardInsufficientMemory, 2), "CardInsufficientMemory on b"},
		{"the type filter is out of scope",
			[]NodeStatus{node("a", CardTypeMismatch), node("b", CardTypeMismatch), node("c", CardTypeMismatch), node("d", ResourceQuotaNotFit), node("e", NodeUnregistered)},
			[]ReasonCount{rc(CardTypeMismatch, 3), rc(ResourceQuotaNotFit, 1), rc(NodeUnregistered, 1)},
			rc(ResourceQuotaNotFit, 1), "ResourceQuotaNotFit on d"},
		{"the card model is out of scope",
			[]NodeStatus{node("a", CardModelNotRequested), node("b", CardModelNotRequested), node("c", QueueCardQuotaNotFit)},
			[]ReasonCount{rc(CardModelNotRequested, 2), rc(QueueCardQuotaNotFit, 1)},
			rc(QueueCardQuotaNotFit, 1), "QueueCardQuotaNotFit on c"},
		{"a selector is out of scope, a taint is not",
			[]NodeStatus{node("a", KubeNodeAffinity), node("b", KubeNodeAffinity), node("c", KubeTaint)},
			[]ReasonCount{rc(KubeNodeAffinity, 2), rc(KubeTaint, 1)},
			rc(KubeTaint, 1), "TaintToleration on c"},
		{"a cordon (unschedulable) is in scope",
			[]NodeStatus{node("a", KubeUnschedulable), node("b", KubeUnschedulable), node("c", CardInsufficientMemory)},
			[]ReasonCount{rc(KubeUnschedulable, 2), rc(CardInsufficientMemory, 1)},
			rc(KubeUnschedulable, 2), "NodeUnschedulable on a"},
		{"nodes without the pod's kind are out of scope; the count stays the gate's whole count",
			[]NodeStatus{kindless("a"), kindless("b"), kindless("c"), tooFew("d"), tooFew("e"), node("f", CardInsufficientMemory)},
			[]ReasonCount{rc(NodeInsufficientDevice, 5), rc(CardInsufficientMemory, 1)},
			rc(NodeInsufficientDevice, 5), "NodeInsufficientDevice on d"},
		{"nodes without the kind leave the memory shortfall",
			[]NodeStatus{kindless("a"), kindless("b"), kindless("c"), node("d", CardInsufficientMemory)},
			[]ReasonCount{rc(NodeInsufficientDevice, 3), rc(CardInsufficientMemory, 1)},
			rc(CardInsufficientMemory, 1), "CardInsufficientMemory on d"},
		{"only nodes without the kind: the most common reason",
			[]NodeStatus{kindless("a"), kindless("b"), node("c", NodeUnregistered)},
			[]ReasonCount{rc(NodeInsufficientDevice, 2), rc(NodeUnregistered, 1)},
			rc(NodeInsufficientDevice, 2), "NodeInsufficientDevice on a"},
		{"only out of scope: the most common",
			[]NodeStatus{node("a", NodeUnregistered), node("b", CardTypeMismatch), node("c", CardTypeMismatch), node("d", CardTypeMismatch)},
			[]ReasonCount{rc(NodeUnregistered, 1), rc(CardTypeMismatch, 3)},
			rc(CardTypeMismatch, 3), "CardTypeMismatch on b"},
		{"a reason no node shows (a card verdict): the code alone",
			nil, []ReasonCount{rc(QueueCardQuotaNotFit, 1)}, rc(QueueCardQuotaNotFit, 1), "QueueCardQuotaNotFit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := &Verdict{nodes: tc.nodes, Reasons: tc.reasons, Summary: "summary"}
			if got := MainReason(v); got != tc.want {
				t.Errorf("MainReason = %+v, want %+v", got, tc.want)
			}
			if got := Blocker(v); got != tc.blocker {
				t.Errorf("Blocker = %q, want %q", got, tc.blocker)
			}
			// The reasons' order is the aggregate's (most nodes first, then by code): the rule must not depend on it.
			rev := append([]ReasonCount(nil), tc.reasons...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			if got := MainReason(&Verdict{nodes: tc.nodes, Reasons: rev}); got != tc.want {
				t.Errorf("reasons reversed: MainReason = %+v, want %+v", got, tc.want)
			}
		})
	}
	if got := MainReason(&Verdict{}); got.Code != "" {
		t.Errorf("no reasons: MainReason = %+v, want none", got)
	}
	if got := Blocker(&Verdict{Summary: "0/0 nodes are available"}); got != "0/0 nodes are available" {
		t.Errorf("no reasons: Blocker = %q, want the summary", got)
	}
}
