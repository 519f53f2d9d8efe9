package extender_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestGeneratedWorldsExtenderPreemption has the extender preempt (PreemptFor, what its preemptor runs for a
// pod the filter found fitting nowhere) for every pending pod of generated worlds with priorities, classes
// and budgets, one after the other, each preemption's effects (victims deleted, the pod nominated) fed back to
// its state as the informer would. Invariants of every preemption it carries out: each victim is a pod of
// lower priority bound to the nominated node, deleted through the API; the pod's status.nominatedNodeName is
// that node; and the engine, on a cluster built from scratch from the API's pods (the victims gone), fits the
// pod on that node with every gate, kube-scheduler's included.
func TestGeneratedWorldsExtenderPreemption(t *testing.T) {
	preempted, victims, first, n := eachWorld(t, 200, xtCheckPreemptorWorld)
	t.Logf("%d worlds from seed %d: %d preemptions carried out, %d victims", n, first, preempted, victims)
	if preempted == 0 {
		t.Error("no preemption in any world: the generator gives nothing to check")
	}
}

func xtCheckPreemptorWorld(t *testing.T, seed uint64) (preempted, victims int) {
	ctx := context.Background()
	w := worldgen.World(seed, worldgen.Options{MaxNodes: 6, MaxPods: 30})
	worldgen.WithPriorities(w, seed)
	classes := map[string]int32{}
	for _, pc := range w.PriorityClasses {
		classes[pc.Name] = pc.Value
	}
	var objs []runtime.Object
	for _, nd := range w.Nodes {
		objs = append(objs, nd)
	}
	for i, p := range w.Pods.Slice() {
		p.UID = types.UID(fmt.Sprintf("uid-%d", i))
		if p.Spec.Priority == nil { // admission's part
			v := classes[p.Spec.PriorityClassName]
			p.Spec.Priority = &v
		}
		p.Spec.SchedulerName = xtScheduler
		objs = append(objs, p)
	}
	for _, q := range w.Quotas {
		objs = append(objs, q)
	}
	e := newXTEnv(t, extender.DefaultOptions(), objs...)
	for _, pc := range w.PriorityClasses {
		e.state.SetPriorityClass(pc)
	}
	for _, b := range w.PDBs {
		e.state.SetPDB(b)
	}
	prio := func(p *corev1.Pod) int32 { return *p.Spec.Priority }
	for _, pod := range w.Pods.Slice() {
		if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
			continue
		}
		done, outcome, err := e.srv.PreemptFor(ctx, pod.Namespace, pod.Name)
		if err != nil {
			t.Fatalf("seed %d pod %s: %s: %v", seed, pod.Name, outcome, err)
		}
		if done == nil {
			continue
		}
		preempted++
		live := e.livePod(pod.Namespace, pod.Name)
		if live.Status.NominatedNodeName != done.Node {
			t.Fatalf("seed %d pod %s: preempted on %s but nominated to %q", seed, pod.Name, done.Node, live.Status.NominatedNodeName)
		}
		if len(done.Victims) == 0 {
			t.Fatalf("seed %d pod %s: a preemption on %s without victims", seed, pod.Name, done.Node)
		}
		for _, v := range done.Victims {
			victims++
			var orig *corev1.Pod
			for _, p := range w.Pods.Slice() {
				if p.Namespace == v.Namespace && p.Name == v.Name {
					orig = p
				}
			}
			switch {
			case orig == nil:
				t.Fatalf("seed %d pod %s: victim %s is no pod of the world", seed, pod.Name, v.Key())
			case orig.Spec.NodeName != done.Node:
				t.Fatalf("seed %d pod %s node %s: victim %s runs on %q", seed, pod.Name, done.Node, v.Key(), orig.Spec.NodeName)
			case prio(orig) >= prio(pod):
				t.Fatalf("seed %d pod %s (priority %d): victim %s has priority %d", seed, pod.Name, prio(pod), v.Key(), prio(orig))
			}
			if _, err := e.client.CoreV1().Pods(v.Namespace).Get(ctx, v.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("seed %d pod %s: victim %s was not deleted (%v)", seed, pod.Name, v.Key(), err)
			}
			e.state.RemovePod(v.Namespace, v.Name) // the informer's part
		}
		e.state.SetPod(live, e.clock.Now())
		ref := engine.NewCluster(engine.DefaultConfig())
		for _, nd := range w.Nodes {
			ref.SetNode(nd)
		}
		all, err := e.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range all.Items {
			ref.SetPod(&all.Items[i])
		}
		for _, q := range w.Quotas {
			ref.SetQuota(q)
		}
		if v := ref.Evaluate(live, engine.EvalOptions{Now: e.clock.Now(), Nodes: []string{done.Node}, Kube: engine.KubeAll}); !v.Fits {
			t.Fatalf("seed %d pod %s: with its victims gone it does not fit on %s: %s", seed, pod.Name, done.Node, v.Summary)
		}
	}
	return preempted, victims
}
