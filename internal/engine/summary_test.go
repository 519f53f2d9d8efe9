package engine_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestSummaryMatchesVerdict: a Summary says what the verdict says, node by node (fits, score, card rank, code,
// HAMi's reason, the kind scope of MainReason), and its verdict is Evaluate's without Nodes and Feasible: over
// generated worlds (NVIDIA, the vendor families worldgen draws, Volcano cards, kube-scheduler's constraints)
// with and without their quotas, over a world of every configured device type, for every candidate list
// shape the extender sends (all nodes, a shuffled subset with duplicates and unknown names), ranked and not,
// on the sequential and the parallel walk.
func TestSummaryMatchesVerdict(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	first, n := worldgen.Seeds(25)
	evaluations := 0
	eachWorld(first, n, func(what string, seed uint64, c *engine.Cluster, pods []*corev1.Pod) {
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				evaluations += checkSummaries(t, what, c, p, seed)
			}
		}
	})
	c, pods := everyKindWorld(t)
	for i, p := range pods {
		evaluations += checkSummaries(t, "every kind", c, p, uint64(i))
	}
	if evaluations == 0 {
		t.Fatal("no pending pod evaluated: the generators are broken")
	}
	t.Logf("%d worlds from seed %d, %d evaluations compared", n, first, evaluations)
}

// eachWorld builds the n generated worlds from seed first, each with kube-scheduler's checks on and off and with
// and without its quotas, and hands each cluster with the world's pods to fn.
func eachWorld(first uint64, n int, fn func(what string, seed uint64, c *engine.Cluster, pods []*corev1.Pod)) {
	for seed := first; seed < first+uint64(n); seed++ {
		for _, kube := range []bool{false, true} {
			w := worldgen.World(seed, worldgen.Options{Kube: kube})
			for _, quotas := range []bool{true, false} {
				c := engine.NewCluster(engine.DefaultConfig())
				for _, node := range w.Nodes {
					c.SetNode(node)
				}
				for _, p := range w.Pods.Slice() {
					c.SetPod(p)
				}
				if quotas {
					for _, q := range w.Quotas {
						c.SetQuota(q)
					}
				}
				fn(fmt.Sprintf("seed %d kube=%v quotas=%v", seed, kube, quotas), seed, c, w.Pods.Slice())
			}
		}
	}
}

// checkSummaries compares Summarize with Evaluate for one pod under each option set; it returns how many.
func checkSummaries(t *testing.T, what string, c *engine.Cluster, p *corev1.Pod, seed uint64) int {
	t.Helper()
	names := c.NodeNames()
	rng := rand.New(rand.NewPCG(seed, 7))
	subset := []string{"no-such-node"}
	for _, name := range names {
		if rng.IntN(3) > 0 {
			subset = append(subset, name)
		}
		if rng.IntN(5) == 0 {
			subset = append(subset, name) // kube-scheduler never repeats a name; a forged request may
		}
	}
	rng.Shuffle(len(subset), func(i, j int) { subset[i], subset[j] = subset[j], subset[i] })
	now := worldgen.Epoch.Add(time.Hour)
	n := 0
	for _, nodes := range [][]string{nil, subset, {}} {
		for _, opts := range []engine.EvalOptions{
			{Now: now, Nodes: nodes, Kube: engine.KubeOff, Unranked: true},
			{Now: now, Nodes: nodes, Kube: engine.KubeOff},
			{Now: now, Nodes: nodes},
		} {
			for _, parallel := range []int{1 << 30, 1} {
				restore := engine.SetParallelMinNodes(parallel)
				full := c.Evaluate(p, opts)
				sum := c.Summarize(p, opts)
				restore()
				compareSummary(t, fmt.Sprintf("%s pod %s/%s nodes=%d unranked=%v kube=%v parallel=%v", what, p.Namespace, p.Name, len(nodes), opts.Unranked, opts.Kube, parallel == 1), c, full, sum, nodes)
				n++
			}
		}
	}
	return n
}

func compareSummary(t *testing.T, what string, c *engine.Cluster, full *engine.Verdict, sum *engine.Summary, requested []string) {
	t.Helper()
	if sum.Len() != len(full.Nodes()) {
		t.Fatalf("%s: %d rows, the verdict has %d nodes", what, sum.Len(), len(full.Nodes()))
	}
	for i := range full.Nodes() {
		ns, row := &full.Nodes()[i], sum.Row(i)
		code, reason := sum.Outcome(i)
		kindless := ns.Code == engine.NodeInsufficientDevice && ns.Check != nil && ns.Check.Have == 0
		if sum.Name(i) != ns.Node || row.Score != ns.Score || int(row.CardRank) != ns.CardRank || row.Fits != ns.Fits || row.Kindless != kindless ||
			code != ns.Code || reason != ns.Reason {
			t.Fatalf("%s: row %d is %s %+v %s %q, the verdict's %+v", what, i, sum.Name(i), *row, code, reason, *ns)
		}
	}
	if got := sum.Feasible(); !slices.Equal(got, full.Feasible()) && (len(got) > 0 || len(full.Feasible()) > 0) {
		t.Fatalf("%s: feasible %v, the verdict's %v", what, got, full.Feasible())
	}
	if !full.Fits && len(full.Reasons) > 0 && sum.MainReason() != engine.MainReason(full) {
		t.Fatalf("%s: main reason %v, the verdict's %v", what, sum.MainReason(), engine.MainReason(full))
	}
	rest := *full
	rest.SetNodes(nil)
	rest.SetFeasible(nil)
	a, _ := json.Marshal(&rest)
	b, _ := json.Marshal(sum.Verdict)
	if string(a) != string(b) {
		t.Fatalf("%s: summary verdict\n%s\nis not the verdict\n%s", what, b, a)
	}
	// Rows by request index, and by name through the cluster (same version) or by search (another cluster).
	index := map[string]int{}
	for i := range full.Nodes() {
		index[full.Nodes()[i].Node] = i
	}
	for i, name := range requested {
		want, ok := index[name]
		if !ok {
			want = -1
		}
		if got := sum.Requested(i); got != want {
			t.Fatalf("%s: requested %d (%s) is row %d, want %d", what, i, name, got, want)
		}
	}
	other := engine.NewCluster(engine.DefaultConfig())
	for _, name := range append(c.NodeNames(), "no-such-node") {
		want, ok := index[name]
		if !ok {
			want = -1
		}
		if got, slow := sum.Find(c, name), sum.Find(other, name); got != want || slow != want {
			t.Fatalf("%s: Find(%s) = %d (by search %d), want %d", what, name, got, slow, want)
		}
	}
	if !reflect.DeepEqual(sum.Verdict.Request, full.Request) {
		t.Fatalf("%s: requests differ", what)
	}
}

// everyKindWorld is worldgen's EveryKind world of the default configuration's device types.
func everyKindWorld(t *testing.T) (*engine.Cluster, []*corev1.Pod) {
	t.Helper()
	cfg := engine.DefaultConfig()
	w := worldgen.EveryKind(cfg.Kinds())
	c := engine.NewCluster(cfg)
	for _, n := range w.Nodes {
		c.SetNode(n)
	}
	if w.Pods.Len() < 10 {
		t.Fatalf("only %d pods for %d kinds", w.Pods.Len(), len(cfg.Kinds()))
	}
	return c, w.Pods.Slice()
}
