package query

import (
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
)

// Explanation is why-pending's answer for one pod, built once (Explain) for every surface: the CLI's text,
// -o json and -o yaml, and the UI's why-pending page render it and compute nothing of their own.
type Explanation struct {
	Pod *corev1.Pod
	// Notice says that HAMi has nothing to schedule in this cluster (NoDevicesNotice); "" when a node registers
	// devices. Every surface shows it first.
	Notice string
	// Phase is the pod's status.phase, Terminating for a bound pod being deleted (as kubectl's STATUS column
	// says).
	Phase string
	// Node and Allocation are set for a pod that already has a node: where it runs and the GPUs it holds.
	Node       string
	Allocation *engine.PodAllocation
	// Held is the allocation GPU by GPU, with each GPU's index on the node ("?" when the node does not list it).
	Held []HeldGPU
	// Verdict is the engine's answer for a pod without a node: every gate on every node, the fixes proven.
	Verdict *engine.Verdict
	// Main is the verdict's main reason (engine.MainReason) when it does not fit: the gate a one-line answer names.
	Main engine.ReasonCount
	// Kube is kube-scheduler's own checks per node, every failing check listed.
	Kube []kubefit.NodeResult
	// KubeQuotaUsed is Kubernetes' own ResourceQuota status.used of the pod's namespace, by resource name.
	KubeQuotaUsed map[string]string
	// Waiting says why a pod that fits may still be Pending (WhyWaiting); computed only once the events are read.
	Waiting []string
	// Events are the pod's events, oldest first.
	Events []*corev1.Event
	// Problems are the input problems found while reading the cluster.
	Problems []engine.Problem
	// Unbound are the pods that hold GPUs on a node they are not bound to: HAMi counts them as used.
	Unbound []UnboundHolder
	// Now is the clock the answer was built on (event ages).
	Now time.Time
}

// HeldGPU is one GPU a placed pod's container holds.
type HeldGPU struct {
	Container, Index, UUID string
	MemMiB, Cores          int64
}

// UnboundHolder is a pod that holds GPUs by HAMi's annotations without being bound to their node.
type UnboundHolder struct {
	Pod     string `json:"pod"`
	Message string `json:"message"`
}

// ExplainInput is what a surface knows of the cluster besides the engine's model: its objects as read, the
// clock, and the detail it shows.
type ExplainInput struct {
	Pod *corev1.Pod
	// Pods are every pod of the cluster (unbound holders, a running scheduler's pod), in any order; a snapshot
	// yields each built into one reused object (Snapshot.Pods.Scan): they are read in passes, never held
	// (strings of them may be). nil: none.
	Pods iter.Seq[*corev1.Pod]
	// Events are the pod's events; EventsRead says they are all there is (a snapshot, or read live): only then
	// does "no FailedScheduling event" say anything.
	Events     []*corev1.Event
	EventsRead bool
	// Leases are the schedulers' leader Leases (LeasesRead: they could be read).
	Leases     []*coordinationv1.Lease
	LeasesRead bool
	// Quotas are the cluster's ResourceQuotas (Kubernetes' own status.used).
	Quotas []*corev1.ResourceQuota
	// KubeChecks reads kube-scheduler's per-node checks (each surface keeps its own node and pod lists; nil
	// reads none).
	KubeChecks func(*corev1.Pod) []kubefit.NodeResult
	Now        time.Time
	// DetailNodes are shown GPU by GPU; DetailAll keeps every node's detail (-o json and yaml).
	DetailNodes []string
	DetailAll   bool
}

// Explain answers why the pod in.Pod is pending on the cluster c, or where it runs when it has a node.
func Explain(c *engine.Cluster, in ExplainInput) Explanation {
	pod := in.Pod
	a := Explanation{Pod: pod, Notice: NoDevicesNotice(c), Now: in.Now, Phase: string(pod.Status.Phase), Problems: c.Problems(), Events: sortedEvents(in.Events)}
	if pod.Spec.NodeName != "" {
		a.Node = pod.Spec.NodeName
		a.Allocation = c.Pod(pod.Namespace, pod.Name)
		a.Held = heldGPUs(c, a.Allocation)
		if pod.DeletionTimestamp != nil {
			a.Phase = "Terminating" // as kubectl's STATUS column says
		}
		return a
	}
	v := c.Evaluate(pod, engine.EvalOptions{Now: in.Now, DetailNodes: in.DetailNodes, DetailAll: in.DetailAll})
	c.ProveFixes(pod, v, engine.EvalOptions{Now: in.Now})
	a.Verdict = v
	if !v.Fits {
		a.Main = engine.MainReason(v)
	}
	if in.KubeChecks != nil {
		a.Kube = in.KubeChecks(pod)
	}
	a.KubeQuotaUsed = KubeQuotaUsed(in.Quotas)[pod.Namespace]
	// UnboundHolders sorts what it finds (equal keys keep the pods' order, as a stable sort of the pods would).
	a.Unbound = UnboundHolders(in.Pods, in.Now)
	if in.EventsRead {
		seen := SeeScheduler(v.Scheduler, in.Leases, in.LeasesRead, in.Pods, in.Now)
		a.Waiting = WhyWaiting(pod, v, a.Events, seen, in.Now)
	}
	return a
}

// UnboundHolders lists, by namespace/name, the pods holding GPUs on a node they are not bound to.
func UnboundHolders(pods iter.Seq[*corev1.Pod], now time.Time) []UnboundHolder {
	type found struct {
		namespace, name string // not the pod: a snapshot's sequence reuses its object (Snapshot.Pods.Scan)
		UnboundHolder
	}
	var all []found
	if pods == nil {
		pods = noPods
	}
	for p := range pods {
		if p == nil {
			continue
		}
		if why := engine.UnboundHolding(p, now); why != "" {
			all = append(all, found{p.Namespace, p.Name, UnboundHolder{Pod: p.Namespace + "/" + p.Name, Message: why}})
		}
	}
	// By namespace/name; pods whose keys are equal by namespace, then name, then their order.
	slices.SortStableFunc(all, func(a, b found) int {
		if c := strings.Compare(a.Pod, b.Pod); c != 0 {
			return c
		}
		if c := strings.Compare(a.namespace, b.namespace); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	var out []UnboundHolder
	for _, f := range all {
		out = append(out, f.UnboundHolder)
	}
	return out
}

// noPods stands for a nil sequence of pods: none.
func noPods(func(*corev1.Pod) bool) {}

// sortedEvents is the events oldest first (EventTime), in a new slice; nil for none.
func sortedEvents(events []*corev1.Event) []*corev1.Event {
	if len(events) == 0 {
		return nil
	}
	out := append([]*corev1.Event(nil), events...)
	sort.SliceStable(out, func(i, j int) bool { return EventTime(out[i]).Before(EventTime(out[j])) })
	return out
}

// heldGPUs lists an allocation's GPUs with their index on the node.
func heldGPUs(c *engine.Cluster, a *engine.PodAllocation) []HeldGPU {
	if a == nil {
		return nil
	}
	n := c.Node(a.Node)
	var out []HeldGPU
	for _, ct := range a.Containers {
		for _, d := range ct.Devices {
			idx := "?"
			if n != nil {
				if g := n.GPUByUUID(d.UUID); g != nil {
					idx = fmt.Sprint(g.Index)
				}
			}
			out = append(out, HeldGPU{Container: ct.Name, Index: idx, UUID: d.UUID, MemMiB: d.UsedMem, Cores: d.UsedCores})
		}
	}
	return out
}
