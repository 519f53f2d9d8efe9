package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
)

// TestBulkLoadIsSetOneByOne builds random worlds with SetNodes and SetPods and one object at a time, and wants
// the same model: every node (its GPUs' usage, its kube-scheduler view), every counted pod, the pods by node,
// the namespaces' usage, the kube usage per node and per pod, and the problems. The pods include what a
// snapshot may hold beside the common case: a key listed twice (on another node, or no longer bound), pods on
// unknown nodes, finished and pending pods, several containers and init containers, unreadable device lists,
// and requests maps shared between pods (as the snapshot reader decodes a repeated list once).
func TestBulkLoadIsSetOneByOne(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		nodes := randomNodes(rng, 2+rng.IntN(6))
		for _, n := range nodes {
			n.Status.Allocatable["pods"] = *resource.NewQuantity(int64(5+rng.IntN(10)), resource.DecimalSI)
			n.Status.Allocatable["cpu"] = resource.MustParse("16")
			n.Status.Allocatable["memory"] = resource.MustParse("64Gi")
		}
		pods := bulkPods(rng, nodes, 5+rng.IntN(60))
		cfg := DefaultConfig()
		if seed%4 != 0 {
			cfg.SchedulerName = DefaultSchedulerName
		}
		if seed%5 == 0 {
			cfg.CountBoundOnly = true
		}

		one := NewCluster(cfg)
		for _, n := range nodes {
			one.SetNode(n)
		}
		for _, p := range pods {
			one.SetPod(p)
		}
		bulk := NewCluster(cfg)
		bulk.SetNodes(nodes)
		bulk.SetPods(pods)
		if bulk.bulk != nil {
			t.Fatalf("seed %d: SetPods left its bulk state behind", seed)
		}
		for _, d := range modelDiff(one, bulk) {
			t.Errorf("seed %d (%d nodes, %d pods): %s", seed, len(nodes), len(pods), d)
		}
		// Then the bulk model goes on as any other: a pod event after the load refreshes its node's view.
		for _, c := range []*Cluster{one, bulk} {
			c.RemovePod(pods[0].Namespace, pods[0].Name)
			c.SetPod(pods[len(pods)-1])
		}
		for _, d := range modelDiff(one, bulk) {
			t.Errorf("seed %d, after a pod event that followed the load: %s", seed, d)
		}
	}
}

// modelDiff names what differs between two models, object by object.
func modelDiff(a, b *Cluster) []string {
	var out []string
	differ := func(what string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			out = append(out, fmt.Sprintf("%s differ:\n  one by one %+v\n  in bulk    %+v", what, x, y))
		}
	}
	differ("node names", a.nodeNames, b.nodeNames)
	for _, name := range a.nodeNames {
		differ("node "+name, a.nodes[name], b.nodes[name])
	}
	differ("node list", a.nodeList, b.nodeList)
	differ("pod entries", sortedKeys(a.pods), sortedKeys(b.pods))
	for key, e := range a.pods {
		differ("pod "+key, e.alloc, b.pods[key].alloc)
	}
	differ("pods by node", podsByNode(a), podsByNode(b))
	differ("namespace usage", a.nsUsed, b.nsUsed)
	differ("kube nodes", a.kube.nodes, b.kube.nodes)
	differ("node records", sortedKeys(a.records), sortedKeys(b.records))
	for name, r := range a.records {
		if s := b.records[name]; s != nil {
			// A usage's sums and a pod's requests are lists in the order a map gave them: compared by their values.
			differ("kube usage of "+name, usageView(&r.kube), usageView(&s.kube))
			differ("the node of record "+name, r.node != nil, s.node == b.nodes[name] && s.node != nil)
		}
	}
	for key, e := range a.pods {
		kp, kq := e.kube, b.pods[key].kube
		differ("kube pod "+key, kp.node(), kq.node())
		differ("the record of kube pod "+key, kp.at == a.records[kp.node()], kq.at == b.records[kq.node()])
		var x, y kubefit.Usage
		if kp.requests != nil && kq.requests != nil {
			x.Add(*kp.requests, +1)
			y.Add(*kq.requests, +1)
		}
		differ("the requests of kube pod "+key, usageView(&x), usageView(&y))
	}
	differ("card pods", a.cardPods, b.cardPods)
	differ("problems", a.Problems(), b.Problems())
	return out
}

// usageView is a usage as its readers see it: the pods, and each resource's sum as a Quantity would print it.
func usageView(u *kubefit.Usage) string {
	out := fmt.Sprint(u.Pods)
	for _, r := range []corev1.ResourceName{"cpu", "memory", "ephemeral-storage"} {
		q := u.Requested(r)
		out += fmt.Sprintf(" %s=%s", r, q.String())
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// podsByNode is every node's counted pods, as PodsOn lists them.
func podsByNode(c *Cluster) map[string][]*PodAllocation {
	out := map[string][]*PodAllocation{}
	for name, r := range c.records {
		if len(r.pods) > 0 {
			out[name] = c.PodsOn(name)
		}
	}
	return out
}

// bulkPods is n pods of the shapes TestBulkLoadIsSetOneByOne names, on the nodes and on "node-gone".
func bulkPods(rng *rand.Rand, nodes []*corev1.Node, n int) []*corev1.Pod {
	shared := []corev1.ResourceList{
		{"cpu": resource.MustParse("1"), "memory": resource.MustParse("2Gi")},
		{"cpu": resource.MustParse("500m")},
		{"cpu": resource.MustParse("0.0001"), "memory": resource.MustParse("1")}, // finer than a milli-unit
	}
	var out []*corev1.Pod
	for i := 0; i < n; i++ {
		node := "node-gone"
		if rng.IntN(8) > 0 {
			node = nodes[rng.IntN(len(nodes))].Name
		}
		g := nodes[rng.IntN(len(nodes))].Name + "-g" + fmt.Sprint(rng.IntN(3))
		if node != "node-gone" && rng.IntN(4) > 0 {
			g = node + "-g" + fmt.Sprint(rng.IntN(2))
		}
		devs := fmt.Sprintf("%s,NVIDIA,%d,%d:;", g, 256*(1+rng.IntN(8)), 5*rng.IntN(10))
		name := fmt.Sprintf("pod-%d", i)
		if len(out) > 0 && rng.IntN(8) == 0 { // the same key again: it replaces the first
			name = out[rng.IntN(len(out))].Name
		}
		p := randomPod(rng, fmt.Sprintf("team-%d", rng.IntN(3)), name)
		for c := range p.Spec.Containers {
			if rng.IntN(2) == 0 {
				p.Spec.Containers[c].Resources.Requests = shared[rng.IntN(len(shared))]
			}
		}
		switch r := rng.IntN(12); {
		case r == 0: // pending
		case r == 1: // bound, finished
			placedOn(p, node, devs)
			p.Status.Phase = corev1.PodSucceeded
		case r == 2: // placed by HAMi, not yet bound
			withAnno(p, codec.PodNodeAnnotation, node, codec.PodAllocatedAnnotation, devs)
		case r == 3: // bound without HAMi's annotations (a CPU pod)
			p.Spec.NodeName, p.Status.Phase = node, corev1.PodRunning
		case r == 4: // an unreadable device list
			placedOn(p, node, "GPU-x,NVIDIA,lots,1:;")
		case r == 5: // being deleted
			placedOn(p, node, devs)
			p.DeletionTimestamp = &metav1.Time{}
		default:
			placedOn(p, node, devs)
		}
		if rng.IntN(10) == 0 {
			p.Spec.Overhead = corev1.ResourceList{"cpu": resource.MustParse("100m")}
		}
		out = append(out, p)
	}
	return out
}
