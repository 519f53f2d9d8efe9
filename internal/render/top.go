package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
)

// NodeHealth says in a word or two why a node's GPUs can or cannot be used: the node's state as kubectl shows
// it first (NotReady, SchedulingDisabled, its NoSchedule and NoExecute taints), then HAMi's view.
func NodeHealth(n *engine.Node) string {
	st, h := NodeState(n), gpuHealth(n)
	switch {
	case st == "":
		return h
	case h == "ok":
		return st
	}
	return st + "; " + h
}

// NodeState is the node's state as kubectl get nodes and describe show it, "" for a Ready, schedulable,
// untainted node: "NotReady,SchedulingDisabled, taint dedicated=vision:NoSchedule".
func NodeState(n *engine.Node) string {
	var parts []string
	if n.NotReady != "" {
		parts = append(parts, "NotReady")
	}
	if n.Unschedulable {
		parts = append(parts, "SchedulingDisabled")
	}
	st := strings.Join(parts, ",")
	if len(n.Taints) > 0 {
		if st != "" {
			st += ", "
		}
		st += "taint " + strings.Join(n.Taints, ", ")
	}
	return st
}

func gpuHealth(n *engine.Node) string {
	if !n.Registered && n.UnreadableBy != "" {
		return "unregistered (HAMi " + n.UnreadableBy + " cannot read it)"
	}
	if !n.Registered {
		return "unregistered"
	}
	// The allocatable count is NVIDIA's: a node of other devices only is not judged by it.
	if n.AllocatableGPUs <= 0 && (n.DevicesOf(0) > 0 || len(n.GPUs) == 0) {
		return "devices not ready"
	}
	var notes []string
	unhealthy, cordoned, mig := 0, 0, 0
	for _, g := range n.GPUs {
		if !g.Healthy {
			unhealthy++
		}
		if g.Cordoned {
			cordoned++
		}
		if g.Mode == engine.ModeMIG {
			mig++
		}
	}
	if unhealthy > 0 {
		notes = append(notes, fmt.Sprintf("%d unhealthy", unhealthy))
	}
	if cordoned > 0 {
		notes = append(notes, fmt.Sprintf("%d cordoned", cordoned))
	}
	if mig > 0 {
		notes = append(notes, fmt.Sprintf("%d MIG", mig))
	}
	if len(notes) == 0 {
		return "ok"
	}
	return strings.Join(notes, ", ")
}

// Nodes is the node table of `top`: GPUs, slots, memory and cores allocated of total, health.
func Nodes(w io.Writer, c *engine.Cluster) error {
	t := NewTable(w, "NODE", "GPUS", "SLOTS", "MEMORY (MiB)", "CORES (%)", "PODS", "HEALTH")
	for _, name := range c.NodeNames() {
		n := c.Node(name)
		s := query.SumNode(n)
		if !n.Registered {
			t.Row(name, "0", "-", "-", "-", fmt.Sprint(c.PodCount(name)), NodeHealth(n))
			continue
		}
		t.Row(name, DeviceCount(c, n), fmt.Sprintf("%d/%d", s.UsedSlots, s.Slots), Ratio(s.UsedMem, s.Mem, ""), Ratio(s.UsedCores, s.Cores, ""),
			fmt.Sprint(c.PodCount(name)), NodeHealth(n))
	}
	return t.Flush()
}

// GPUs is the per-GPU table of `top -o wide`.
func GPUs(w io.Writer, c *engine.Cluster) error {
	t := NewTable(w, "NODE", "GPU", "UUID", "TYPE", "NUMA", "MODE", "SLOTS", "MEMORY (MiB)", "CORES (%)", "STATE", "PODS")
	for _, name := range c.NodeNames() {
		n := c.Node(name)
		pods := map[string][]string{}
		for _, p := range c.PodsOn(name) {
			for _, u := range p.Uses {
				pods[u.UUID] = append(pods[u.UUID], p.Key())
			}
		}
		for _, g := range n.GPUs {
			state := "ok"
			switch {
			case !g.Healthy:
				state = "unhealthy"
			case g.Cordoned:
				state = "cordoned"
			}
			t.Row(name, fmt.Sprint(g.Index), g.UUID, g.Type, fmt.Sprint(g.Numa), g.Mode, fmt.Sprintf("%d/%d", g.UsedSlots, g.Slots),
				Ratio(g.UsedMem, g.TotalMem, ""), Ratio(g.UsedCores, g.TotalCores, ""), state, orDash(strings.Join(pods[g.UUID], ",")))
		}
	}
	return t.Flush()
}

// Quotas is the namespace quota table of the given namespaces: HAMi-accounted used against limit, beside
// Kubernetes' status.
func Quotas(w io.Writer, c *engine.Cluster, namespaces []string, kubeUsed func(namespace, resource string) string) error {
	t := NewTable(w, "NAMESPACE", "RESOURCE", "HAMI USED", "LIMIT", "USE", "RESOURCEQUOTA", "KUBERNETES STATUS")
	for _, ns := range namespaces {
		q := c.Quota(ns)
		for _, l := range QuotaLines(q) {
			if l == nil {
				continue
			}
			pct := "-"
			if l.Limit > 0 {
				pct = fmt.Sprintf("%d%%", l.Used*100/l.Limit)
			} else if l.Used == 0 {
				pct = "0%"
			}
			t.Row(ns, l.Resource, fmt.Sprintf("%d %s", l.Used, l.Unit), fmt.Sprintf("%d %s", l.Limit, l.Unit), pct, l.Source, orDash(kubeUsed(ns, l.Resource)))
		}
	}
	return t.Flush()
}

// PendingRow is one waiting GPU pod with what its verdict says in one line. It keeps the lines, not the
// verdict: a verdict holds a row for every node, and a large cluster's hundreds of waiting pods would hold them
// all at once.
type PendingRow struct {
	Namespace, Name string
	Age             string
	GPUs            int    // the GPUs the pod asks for (PodRequest.TotalGPUs)
	Reason          string // PendingLine
	Summary         string // the verdict's summary
}

// NewPendingRow reads what the table and top's JSON show of a waiting pod's verdict; nominated is the pod's
// status.nominatedNodeName (a preemption chose that node for it).
func NewPendingRow(namespace, name, age string, v *engine.Verdict, nominated string) PendingRow {
	return PendingRow{Namespace: namespace, Name: name, Age: age, GPUs: v.Request.TotalGPUs(), Reason: PendingLine(v, nominated),
		Summary: v.Summary}
}

// PendingLine is OneLine for a pending pod, first saying when a preemption nominated it for a node: it then
// waits for the pods preempted there to leave (kube-scheduler's own preemption or the extender's).
func PendingLine(v *engine.Verdict, nominated string) string {
	if nominated == "" {
		return OneLine(v)
	}
	return "nominated for " + nominated + " (preempted pods leaving) · " + OneLine(v)
}

// OneLine is the short reason a pending pod waits.
func OneLine(v *engine.Verdict) string {
	if v.Routing != "" {
		return v.Routing
	}
	if v.Fits {
		return FitsLine(v)
	}
	if len(v.Reasons) == 0 {
		return v.Summary
	}
	r := MainReasonOf(v)
	return fmt.Sprintf("%s on %d/%d nodes: %s", r.Code, r.Nodes, v.NodeCount(), example(v, r.Code))
}

// MainReasonOf is the verdict's main reason (engine.MainReason, the one rule every surface uses).
func MainReasonOf(v *engine.Verdict) engine.ReasonCount { return engine.MainReason(v) }

// MainReason is the main reason among reason counts (engine.MainReasonAmong).
func MainReason(reasons []engine.ReasonCount) engine.ReasonCount {
	return engine.MainReasonAmong(reasons)
}

// FitsLine is the short answer for a verdict that fits. Only a pod with GPUs HAMi manages has a Placement; a pod
// that fits on its card quota alone (a MIG or MPS slice, whole cards of NVIDIA's device plugin) or asks for no
// GPU HAMi manages is placed by kube-scheduler, so the line names the preferred node, never a placement.
func FitsLine(v *engine.Verdict) string {
	if v.Placement != nil {
		return "fits on " + v.Placement.Node + " now (waiting for the scheduler)"
	}
	if len(v.Feasible()) > 0 {
		return "fits now, preferred " + v.Feasible()[0] + " (" + orDash(v.Scheduler) + "'s to place; HAMi chooses no GPU)"
	}
	return v.Summary
}

// Pending is the table of GPU pods waiting for a node.
func Pending(w io.Writer, rows []PendingRow) error {
	t := NewTable(w, "NAMESPACE", "POD", "GPUS", "AGE", "REASON")
	for _, r := range rows {
		t.Row(r.Namespace, r.Name, fmt.Sprint(r.GPUs), orDash(r.Age), r.Reason)
	}
	return t.Flush()
}

// Copies says how many copies of a pod fit now and where, the busiest nodes first (at most five named):
// "Copies: 7 fit now (gpu-a100-01: 4, gpu-h100-01: 3)".
func Copies(cp engine.Capacity) string {
	total := fmt.Sprint(cp.Copies)
	if cp.Capped {
		total = fmt.Sprintf("at least %d", cp.Copies)
	}
	nodes := append([]engine.NodeCopies(nil), cp.Nodes...)
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Copies > nodes[j].Copies })
	var where []string
	for i, n := range nodes {
		if i == 5 {
			if more := len(nodes) - 5; more == 1 {
				where = append(where, "1 more node")
			} else {
				where = append(where, fmt.Sprintf("%d more nodes", more))
			}
			break
		}
		where = append(where, fmt.Sprintf("%s: %d", n.Node, n.Copies))
	}
	line := fmt.Sprintf("Copies: %s fit now", total)
	if len(where) > 0 {
		line += " (" + strings.Join(where, ", ") + ")"
	}
	return line
}

// CopiesLimit says which quota stops the next copy when the GPUs would take it, or "" when the GPUs are full:
// "The namespace quota is the limit, not the GPUs: one more copy needs 10000 MiB, 8048 of 120000 MiB left (…)".
func CopiesLimit(cp engine.Capacity) string {
	c := cp.Limit
	if c == nil {
		return ""
	}
	switch c.Code {
	case engine.ResourceQuotaNotFit:
		return fmt.Sprintf("The namespace quota is the limit, not the GPUs: one more copy needs %d %s, %d of %d %s left (%s).",
			c.Need, c.Unit, c.Have, c.Total, c.Unit, c.Detail)
	case engine.QueueCardQuotaNotFit:
		return "The queue's card quota is the limit, not the GPUs: " + c.Detail + "."
	}
	return ""
}

// QuotaLines are a namespace's quota lines: NVIDIA's memory and cores (nil when unlimited), then the other
// device types' keys.
func QuotaLines(q engine.QuotaStatus) []*engine.QuotaLine {
	out := []*engine.QuotaLine{q.Memory, q.Cores}
	for i := range q.Devices {
		out = append(out, &q.Devices[i])
	}
	return out
}

// DeviceCount is a node's device count for the GPUS column: the number alone for NVIDIA GPUs, else with the
// devices' word ("4 NPU", "2 GPU, 4 DCU").
func DeviceCount(c *engine.Cluster, n *engine.Node) string {
	var words []string
	counts := map[string]int{}
	for i := range n.GPUs {
		w := c.Word(&n.GPUs[i])
		if counts[w] == 0 {
			words = append(words, w)
		}
		counts[w]++
	}
	if len(words) == 0 || len(words) == 1 && words[0] == "GPU" && n.DevicesOf(0) == len(n.GPUs) {
		return fmt.Sprint(len(n.GPUs))
	}
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = fmt.Sprintf("%d %s", counts[w], w)
	}
	return strings.Join(parts, ", ")
}
