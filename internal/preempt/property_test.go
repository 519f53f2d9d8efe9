package preempt

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestGeneratedWorldsPreemption searches a preemption for every pending pod of generated worlds with
// priorities and budgets. Invariants: the search is deterministic and leaves the cluster as it was; every chosen
// preemption evicts only pods of lower priority bound to the chosen node that may be evicted, never for a pod
// whose policy is Never; and a cluster rebuilt without the victims, evaluated by the engine from scratch,
// fits the pod on that node. The index read a node at a time (NewIndexByNode, as a snapshot's read commands
// build it) gives the same searches, answers and pods as the index of every pod.
func TestGeneratedWorldsPreemption(t *testing.T) {
	first, n := worldgen.Seeds(300)
	searched, chosen := 0, 0
	for seed := first; seed < first+uint64(n); seed++ {
		w := worldgen.World(seed, worldgen.Options{Kube: seed%2 == 0, MaxNodes: 8, MaxPods: 40})
		worldgen.WithPriorities(w, seed)
		cfg, err := w.Config(snapshot.DefaultDeviceConfigMap)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		c, _ := w.Cluster(cfg)
		ix := NewIndex(w.Pods.Slice(), w.PriorityClasses, w.PDBs)
		byNode := NewIndexByNode(w.PodsBoundTo, w.Pods.Reader(), w.Pods.At, w.PriorityClasses, w.PDBs)
		for _, pod := range append(w.Pods.Slice(), preemptors(w)...) {
			if pod.Spec.NodeName != "" {
				if got, want := byNode.PodOn(pod.Spec.NodeName, pod.Namespace, pod.Name), ix.PodOn(pod.Spec.NodeName, pod.Namespace, pod.Name); got != want {
					t.Fatalf("seed %d pod %s/%s: PodOn read a node at a time gives %p, the index of every pod %p", seed, pod.Namespace, pod.Name, got, want)
				}
			}
			if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
				continue
			}
			before := c.Evaluate(pod, engine.EvalOptions{})
			if got, want := Explain(c, byNode, pod, before, Options{}), Explain(c, ix, pod, before, Options{}); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d pod %s/%s: the answer read a node at a time is %+v, with the index of every pod %+v", seed, pod.Namespace, pod.Name, got, want)
			}
			if before.Fits || before.NotHAMi {
				continue
			}
			searched++
			res := Search(c, ix, pod, Options{})
			if again := Search(c, ix, pod, Options{}); !reflect.DeepEqual(res, again) {
				t.Fatalf("seed %d pod %s: two searches differ: %+v and %+v", seed, res.Pod, res, again)
			}
			if got := Search(c, byNode, pod, Options{}); !reflect.DeepEqual(got, res) {
				t.Fatalf("seed %d pod %s: the search read a node at a time gives %+v, with the index of every pod %+v", seed, res.Pod, got, res)
			}
			if after := c.Evaluate(pod, engine.EvalOptions{}); after.Summary != before.Summary {
				t.Fatalf("seed %d pod %s: the search changed the cluster: %q -> %q", seed, res.Pod, before.Summary, after.Summary)
			}
			if res.Chosen == nil {
				if res.Reason == "" {
					t.Fatalf("seed %d pod %s: no preemption and no reason", seed, res.Pod)
				}

				continue
			}
			chosen++
			checkPreemption(t, seed, w, cfg, ix, pod, res)
		}
	}
	t.Logf("%d worlds from seed %d: %d pending pods searched, %d preemptions checked", n, first, searched, chosen)
	if chosen == 0 {
		t.Error("no preemption in any world: the generator gives none to check")
	}
}

// preemptors are copies of up to three running pods, pending at the highest priority: the generated pending
// pods often ask for what no node has, these ask for what a running pod already holds.
func preemptors(w *snapshot.Snapshot) []*corev1.Pod {
	var out []*corev1.Pod
	top := worldgen.Classes[len(worldgen.Classes)-1]
	for _, p := range w.Pods.Slice() {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning || len(out) == 3 {
			continue
		}
		q := &corev1.Pod{ObjectMeta: *p.ObjectMeta.DeepCopy(), Spec: *p.Spec.DeepCopy()}
		q.Name = "preemptor-" + p.Name
		q.Annotations, q.Spec.NodeName = nil, ""
		q.Status.Phase = corev1.PodPending
		q.Spec.PriorityClassName, q.Spec.Priority = top.Name, &top.Value
		out = append(out, q)
	}
	return out
}

func checkPreemption(t *testing.T, seed uint64, w *snapshot.Snapshot, cfg engine.Config, ix *Index, pod *corev1.Pod, res Result) {
	t.Helper()
	if ix.PreemptsNever(pod) {
		t.Fatalf("seed %d pod %s: preempts though its policy is Never", seed, res.Pod)
	}
	gone := map[string]bool{}
	for _, v := range res.Chosen.Victims {
		vp := w.Pod(v.Namespace, v.Name)
		switch {
		case vp == nil:
			t.Fatalf("seed %d pod %s: victim %s is no pod of the world", seed, res.Pod, v.Key())
		case vp.Spec.NodeName != res.Chosen.Node:
			t.Fatalf("seed %d pod %s: victim %s runs on %q, not on the chosen %s", seed, res.Pod, v.Key(), vp.Spec.NodeName, res.Chosen.Node)
		case ix.Priority(vp) >= res.Priority:
			t.Fatalf("seed %d pod %s (priority %d): victim %s has priority %d", seed, res.Pod, res.Priority, v.Key(), ix.Priority(vp))
		case protection(vp) != "":
			t.Fatalf("seed %d pod %s: victim %s is %s", seed, res.Pod, v.Key(), protection(vp))
		}
		gone[v.Key()] = true
	}
	rest := *w
	rest.Pods = snapshot.PodsOf()
	for _, p := range w.Pods.Slice() {
		if !gone[p.Namespace+"/"+p.Name] {
			rest.Pods.Add(p)
		}
	}
	c2, _ := rest.Cluster(cfg)
	if v := c2.Evaluate(pod, engine.EvalOptions{Nodes: []string{res.Chosen.Node}}); !v.Fits {
		t.Fatalf("seed %d pod %s: without victims %v it still does not fit on %s: %s", seed, res.Pod, res.Chosen.Victims, res.Chosen.Node, v.Summary)
	}
}
