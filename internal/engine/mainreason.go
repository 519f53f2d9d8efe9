package engine

import "fmt"

// MainReason is "the main reason" a verdict that does not fit gives, the one rule of every surface: top's and
// the UI's one-line reasons, why-pending's and what-if's answers (query.Explain, query.WhatIf), a fix's "then"
// (Blocker) and the extender's pending metric. It is MainReasonAmong, where nodes that have none of the pod's
// device kind (an NVIDIA pod on an NPU node: NodeInsufficientDevice with 0 available) are out of scope too, like
// an unregistered node. The count it returns is the gate's whole count, as the summary line has it.
func MainReason(v *Verdict) ReasonCount {
	if v.lazy != nil { // the rows say it without building the statuses
		return mainReason(v.Reasons, v.lazy.kindless())
	}
	none := 0
	for i := range v.Nodes() {
		if kindless(&v.Nodes()[i]) {
			none++
		}
	}
	return mainReason(v.Reasons, none)
}

// mainReason is MainReason of a verdict's reasons where none nodes have none of the pod's device kind.
func mainReason(reasons []ReasonCount, none int) ReasonCount {
	if none == 0 {
		return MainReasonAmong(reasons)
	}
	scoped := make([]ReasonCount, 0, len(reasons))
	for _, r := range reasons {
		if r.Code == NodeInsufficientDevice {
			if r.Nodes -= none; r.Nodes <= 0 {
				continue
			}
		}
		scoped = append(scoped, r)
	}
	main := MainReasonAmong(scoped)
	if main.Code == "" || outOfScope[main.Code] {
		main = MainReasonAmong(reasons) // nothing in scope: the most common reason, as before
	}
	for _, r := range reasons {
		if r.Code == main.Code {
			return r
		}
	}
	return main
}

// outOfScope are the codes of nodes the pod could never use as it is written or as the nodes are: no GPUs
// registered or served, or none of the type, UUID, card model, node selector or node name the pod names. They
// explain a node, not the wait.
var outOfScope = map[Code]bool{NodeUnregistered: true, NodeDevicesNotReady: true, CardTypeMismatch: true,
	CardUUIDMismatch: true, CardModelNotRequested: true, KubeNodeAffinity: true, KubeNodeName: true}

// MainReasonAmong is the gate a one-line answer names: of the nodes the pod could use, the gate that rules out the
// most (why-pending's GATE table lists every gate by count); on a tie the later gate, the one closest to fitting (a quota
// on the GPUs the pod may use says more than the check that rules out another node). When every node is out of
// scope, the most common of those reasons.
func MainReasonAmong(reasons []ReasonCount) ReasonCount {
	var best ReasonCount
	pick := func(skipOutOfScope bool) {
		for _, r := range reasons {
			if skipOutOfScope && outOfScope[r.Code] {
				continue
			}
			if best.Code == "" || r.Nodes > best.Nodes || r.Nodes == best.Nodes && GateRank(r.Code) > GateRank(best.Code) {
				best = r
			}
		}
	}
	if pick(true); best.Code == "" {
		pick(false)
	}
	return best
}

// kindless reports whether a node failed because it has none of the pod's device kind at all.
func kindless(ns *NodeStatus) bool {
	return ns.Code == NodeInsufficientDevice && ns.Check != nil && ns.Check.Have == 0
}

// Blocker is the main reason (MainReason) of a verdict that does not fit, with the first node that shows it (one
// in scope when there is one): a fix that is not enough says "then Blocker". The verdict's summary when it has
// no reason.
func Blocker(v *Verdict) string {
	if len(v.Reasons) == 0 {
		return v.Summary
	}
	r := MainReason(v)
	node := ""
	if l := v.lazy; l != nil { // the rows say it without building the statuses
		for i := range l.rows {
			if code, _ := l.outcome(i); code != r.Code || l.rows[i].Fits {
				continue
			}
			if !l.rows[i].Kindless {
				node = l.nodes[i].Name
				break
			}
			if node == "" {
				node = l.nodes[i].Name
			}
		}
	} else {
		node = blockerNode(v.nodes, r.Code)
	}
	if node == "" {
		return string(r.Code)
	}
	return fmt.Sprintf("%s on %s", r.Code, node)
}

// blockerNode is the first node failing with code that has some of the pod's device kind, else the first.
func blockerNode(nodes []NodeStatus, code Code) string {
	node := ""
	for i := range nodes {
		if ns := &nodes[i]; ns.Code == code && !ns.Fits {
			if !kindless(ns) {
				return ns.Node
			}
			if node == "" {
				node = ns.Node
			}
		}
	}
	return node
}
