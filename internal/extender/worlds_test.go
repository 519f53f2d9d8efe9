package extender_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestGeneratedWorldsExtender drives the extender's handlers over generated worlds. For every pending pod of
// HAMi's profile, in turn: filter's feasible nodes are the verdict's (what why-pending and what-if say, from a
// cluster built from the same objects), every failed node's reason is the verdict's, prioritize gives the
// verdict's node the top score, and binding it there succeeds; after all binds, no bind has pushed a GPU past
// its memory, cores or slots (the worlds may start oversubscribed; a bind must never add to it).
func TestGeneratedWorldsExtender(t *testing.T) {
	filters, binds, first, n := eachWorld(t, 300, xtCheckWorld)
	t.Logf("%d worlds from seed %d: %d filter calls, %d binds", n, first, filters, binds)
	if binds == 0 {
		t.Error("no bind in any world: the generator is broken")
	}
}

func xtCheckWorld(t *testing.T, seed uint64) (filters, binds int) {
	w := worldgen.World(seed, worldgen.Options{})
	var objs []runtime.Object
	var names []string
	for _, n := range w.Nodes {
		objs, names = append(objs, n), append(names, n.Name)
	}
	for i, p := range w.Pods.Slice() {
		p.UID = types.UID(fmt.Sprintf("uid-%d", i))
		objs = append(objs, p)
	}
	for _, q := range w.Quotas {
		objs = append(objs, q)
	}
	opts := extender.DefaultOptions()
	opts.ReleaseLockAfterBind = true // no device plugin here to release the node lock between binds
	e := newXTEnv(t, opts, objs...)
	e.clock.t = worldgen.Epoch.Add(10 * time.Minute)
	ref := engine.NewCluster(engine.DefaultConfig())
	for _, n := range w.Nodes {
		ref.SetNode(n)
	}
	for _, p := range w.Pods.Slice() {
		ref.SetPod(p)
	}
	for _, q := range w.Quotas {
		ref.SetQuota(q)
	}
	before := xtUsage(e)
	for _, p := range w.Pods.Slice() {
		if p.Spec.NodeName != "" || (p.Spec.SchedulerName != "hami-scheduler" && p.Spec.SchedulerName != "") {
			continue
		}
		if req, _ := engine.ParseRequest(p, engine.DefaultConfig()); !req.WantsGPU() {
			continue
		}
		// kube-scheduler sends the extender only the nodes its own filters pass (cordon, taints, selector,
		// resources: the bound pods' usage aside here), and the bind refuses one its static checks exclude.
		kp := kubefit.Prepare(p, engine.DefaultConfig().ManagedResources())
		var nn []string
		for _, n := range w.Nodes {
			if len(kp.CheckNode(kubefit.NewNode(n), &kubefit.Usage{}, false)) == 0 {
				nn = append(nn, n.Name)
			}
		}
		if len(nn) == 0 {
			continue
		}
		v := ref.Evaluate(p, engine.EvalOptions{Now: e.clock.Now(), Nodes: nn})
		var fr extenderv1.ExtenderFilterResult
		e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: p, NodeNames: &nn}, &fr)
		filters++
		got := map[string]bool{}
		if fr.NodeNames != nil {
			for _, n := range *fr.NodeNames {
				got[n] = true
			}
		}
		for _, ns := range v.Nodes() {
			if got[ns.Node] != ns.Fits {
				t.Errorf("seed %d: pod %s/%s node %s: filter says fits=%v, the verdict %v (%s)", seed, p.Namespace, p.Name, ns.Node, got[ns.Node], ns.Fits, ns.Reason)
			}
			if reason, failed := fr.FailedNodes[ns.Node]; failed && !ns.Fits && ns.Reason != "" && reason != ns.Reason {
				t.Errorf("seed %d: pod %s/%s node %s: filter's reason %q, the verdict's %q", seed, p.Namespace, p.Name, ns.Node, reason, ns.Reason)
			}
		}
		if !v.Fits || v.Placement == nil {
			continue
		}
		feasible := append([]string(nil), v.Feasible()...)
		var prio extenderv1.HostPriorityList
		e.postJSON("/prioritize", extenderv1.ExtenderArgs{Pod: p, NodeNames: &feasible}, &prio)
		top := int64(-1)
		scores := map[string]int64{}
		for _, h := range prio {
			scores[h.Host] = h.Score
			top = max(top, h.Score)
		}
		if scores[v.Placement.Node] != top {
			t.Errorf("seed %d: pod %s/%s: what-if's node %s scores %d, the top score is %d (%v)", seed, p.Namespace, p.Name, v.Placement.Node, scores[v.Placement.Node], top, prio)
		}
		var br extenderv1.ExtenderBindingResult
		e.postJSON("/bind", extenderv1.ExtenderBindingArgs{PodName: p.Name, PodNamespace: p.Namespace, PodUID: p.UID, Node: v.Placement.Node}, &br)
		if br.Error != "" && strings.Contains(br.Error, "/locker since") {
			continue // the world holds a node lock of its own: HAMi's bind refuses too
		}
		if br.Error != "" {
			t.Errorf("seed %d: bind %s/%s to %s: %s", seed, p.Namespace, p.Name, v.Placement.Node, br.Error)
			continue
		}
		binds++
		// The devices the extender wrote, of every family, are the ones what-if and why-pending show.
		live := e.livePod(p.Namespace, p.Name).Annotations
		for k, want := range v.Placement.Annotations(e.clock.Now()) {
			if got := live[k]; got != want {
				t.Errorf("seed %d: pod %s/%s bound with %s=%q, what-if says %q", seed, p.Namespace, p.Name, k, got, want)
			}
		}
		// The reference follows: the pod as bound, with the placement's annotations.
		placed := p.DeepCopy()
		for k, val := range v.Placement.Annotations(e.clock.Now()) {
			placed.Annotations[k] = val
		}
		placed.Spec.NodeName = v.Placement.Node
		ref.SetPod(placed)
	}
	after := xtUsage(e)
	for uuid, a := range after {
		b := before[uuid]
		for _, x := range [][3]int64{{a.UsedMem, a.TotalMem, b.UsedMem}, {a.UsedCores, a.TotalCores, b.UsedCores}, {int64(a.UsedSlots), int64(a.Slots), int64(b.UsedSlots)}} {
			if x[0] > x[1] && x[0] > x[2] {
				t.Errorf("seed %d: GPU %s over capacity after the binds: %d of %d (was %d)", seed, uuid, x[0], x[1], x[2])
			}
		}
	}
	return filters, binds
}

// xtUsage is every GPU of the extender's state, by UUID.
func xtUsage(e *xtEnv) map[string]engine.GPU {
	out := map[string]engine.GPU{}
	e.state.Read(func(c *engine.Cluster) {
		for _, name := range c.NodeNames() {
			for _, g := range c.Node(name).GPUs {
				out[g.UUID] = g
			}
		}
	})
	return out
}

var _ = corev1.PodPending
