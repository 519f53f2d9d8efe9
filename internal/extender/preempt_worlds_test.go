package extender_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestGeneratedWorldsPreemptVerb asks the preempt verb about generated worlds with priorities, every pending GPU
// pod in turn, with kube-scheduler's candidates drawn at random (each node, a random share of its pods of lower
// priority). Invariants: every node it returns keeps kube-scheduler's victims; every victim it adds is a pod of
// lower priority bound to that node; and a cluster built without all of them, evaluated by the engine from
// scratch, fits the pod on that node.
func TestGeneratedWorldsPreemptVerb(t *testing.T) {
	asked, kept, first, n := eachWorld(t, 200, xtCheckPreemptWorld)
	t.Logf("%d worlds from seed %d: %d candidate nodes asked about, %d kept", n, first, asked, kept)
	if kept == 0 {
		t.Error("no node kept in any world: the generator gives nothing to check")
	}
}

func xtCheckPreemptWorld(t *testing.T, seed uint64) (asked, kept int) {
	w := worldgen.World(seed, worldgen.Options{MaxNodes: 6, MaxPods: 30})
	worldgen.WithPriorities(w, seed)
	// The API server's admission writes spec.priority from the class: the extender reads nothing else.
	classes := map[string]int32{}
	for _, pc := range w.PriorityClasses {
		classes[pc.Name] = pc.Value
	}
	var objs []runtime.Object
	byUID := map[string]*corev1.Pod{}
	for _, nd := range w.Nodes {
		objs = append(objs, nd)
	}
	for i, p := range w.Pods.Slice() {
		p.UID = types.UID(fmt.Sprintf("uid-%d", i))
		if p.Spec.Priority == nil {
			v := classes[p.Spec.PriorityClassName] // "" is the global default, experiment: 0
			p.Spec.Priority = &v
		}
		p.Spec.SchedulerName = xtScheduler
		objs = append(objs, p)
		byUID[string(p.UID)] = p
	}
	for _, q := range w.Quotas {
		objs = append(objs, q)
	}
	e := newXTEnv(t, extender.DefaultOptions(), objs...)
	r := rand.New(rand.NewPCG(seed, 7))
	for _, pod := range w.Pods.Slice() {
		if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
			continue
		}
		args := extenderv1.ExtenderPreemptionArgs{Pod: pod, NodeNameToMetaVictims: map[string]*extenderv1.MetaVictims{}}
		for _, nd := range w.Nodes {
			mv := &extenderv1.MetaVictims{}
			for _, p := range w.Pods.Slice() {
				if p.Spec.NodeName == nd.Name && *p.Spec.Priority < *pod.Spec.Priority && r.IntN(3) == 0 {
					mv.Pods = append(mv.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
				}
			}
			if len(mv.Pods) > 0 {
				args.NodeNameToMetaVictims[nd.Name] = mv
			}
		}
		if len(args.NodeNameToMetaVictims) == 0 {
			continue
		}
		asked += len(args.NodeNameToMetaVictims)
		var res extenderv1.ExtenderPreemptionResult
		e.postJSON("/preempt", args, &res)
		for node, mv := range res.NodeNameToMetaVictims {
			kept++
			gone := map[string]bool{}
			for _, mp := range mv.Pods {
				v := byUID[mp.UID]
				switch {
				case v == nil:
					t.Fatalf("seed %d pod %s node %s: victim uid %s is no pod", seed, pod.Name, node, mp.UID)
				case v.Spec.NodeName != node:
					t.Fatalf("seed %d pod %s node %s: victim %s runs on %q", seed, pod.Name, node, v.Name, v.Spec.NodeName)
				case *v.Spec.Priority >= *pod.Spec.Priority:
					t.Fatalf("seed %d pod %s (priority %d) node %s: victim %s has priority %d", seed, pod.Name, *pod.Spec.Priority, node, v.Name, *v.Spec.Priority)
				}
				gone[mp.UID] = true
			}
			for _, mp := range args.NodeNameToMetaVictims[node].Pods {
				if !gone[mp.UID] {
					t.Fatalf("seed %d pod %s node %s: kube-scheduler's victim %s was left out", seed, pod.Name, node, mp.UID)
				}
			}
			ref := engine.NewCluster(engine.DefaultConfig())
			for _, nd := range w.Nodes {
				ref.SetNode(nd)
			}
			for _, p := range w.Pods.Slice() {
				if !gone[string(p.UID)] {
					ref.SetPod(p)
				}
			}
			for _, q := range w.Quotas {
				ref.SetQuota(q)
			}
			if v := ref.Evaluate(pod, engine.EvalOptions{Nodes: []string{node}, Kube: engine.KubeOff}); !v.Fits {
				t.Fatalf("seed %d pod %s: without the victims it does not fit on %s: %s", seed, pod.Name, node, v.Summary)
			}
		}
	}
	return asked, kept
}
