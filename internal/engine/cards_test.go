package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// cardNode is a HAMi node with GPU-feature-discovery labels for product; extra allocatable as name, count pairs.
func cardNode(name, product string, n int, memMiB int64, extra ...any) *corev1.Node {
	node := mkNode(name, gpus(name, n, memMiB))
	node.Labels = map[string]string{"nvidia.com/gpu.product": product, "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "143771"}
	for i := 0; i+1 < len(extra); i += 2 {
		node.Status.Allocatable[corev1.ResourceName(extra[i].(string))] = *resource.NewQuantity(int64(extra[i+1].(int)), resource.DecimalSI)
	}
	return node
}

func TestNodeCards(t *testing.T) {
	plain := func(labels map[string]string, alloc ...any) *corev1.Node {
		n := mkNode("n", nil)
		n.Status.Allocatable = corev1.ResourceList{}
		n.Labels = labels
		for i := 0; i+1 < len(alloc); i += 2 {
			n.Status.Allocatable[corev1.ResourceName(alloc[i].(string))] = *resource.NewQuantity(int64(alloc[i+1].(int)), resource.DecimalSI)
		}
		return n
	}
	gfd := map[string]string{"nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "143771",
		"nvidia.com/gpu.replicas": "2", "nvidia.com/mig-1g.18gb.product": "NVIDIA-H200-MIG-1g.18gb"}
	tests := []struct {
		name      string
		node      *corev1.Node
		physical  int
		want      []NodeCard
		wantSlots int64
	}{
		{"whole cards", plain(gfd, "nvidia.com/gpu", 7, "cpu", 64), 0,
			[]NodeCard{{Name: "NVIDIA-H200", Resource: "nvidia.com/gpu", Count: 7, Kind: CardKindWhole}}, 0},
		{"MIG and MPS beside whole cards", plain(gfd, "nvidia.com/gpu", 7, "nvidia.com/mig-1g.18gb", 3, "nvidia.com/mig-3g.71gb", 1, "nvidia.com/gpu.shared", 4), 0,
			[]NodeCard{
				{Name: "NVIDIA-H200", Resource: "nvidia.com/gpu", Count: 7, Kind: CardKindWhole},
				{Name: "NVIDIA-H200/mps-140g*1/2", Resource: "nvidia.com/gpu.shared", Count: 4, Kind: CardKindMPS},
				{Name: "NVIDIA-H200/mig-1g.18gb-mixed", Resource: "nvidia.com/mig-1g.18gb", Count: 3, Kind: CardKindMIG},
				{Name: "NVIDIA-H200/mig-3g.71gb-mixed", Resource: "nvidia.com/mig-3g.71gb", Count: 1, Kind: CardKindMIG},
			}, 0},
		{"HAMi node counts physical GPUs, not split-count slots", plain(gfd, "nvidia.com/gpu", 80, "nvidia.com/gpumem", 1000), 8,
			[]NodeCard{{Name: "NVIDIA-H200", Resource: "nvidia.com/gpu", Count: 8, Kind: CardKindWhole}}, 80},
		{"no product label", plain(map[string]string{"nvidia.com/gpu.count": "8"}, "nvidia.com/gpu", 8), 0, nil, 0},
		{"product without memory label", plain(map[string]string{"nvidia.com/gpu.product": "X", "nvidia.com/gpu.count": "8"}, "nvidia.com/gpu", 8), 0, nil, 0},
		{"another vendor", plain(map[string]string{"huawei.com/npu.product": "Ascend-910B", "huawei.com/npu.count": "8", "huawei.com/npu.memory": "65536"}, "huawei.com/Ascend910", 8, "nvidia.com/gpu", 2), 0,
			[]NodeCard{{Name: "Ascend-910B", Resource: "huawei.com/Ascend910", Count: 8, Kind: CardKindWhole}}, 0},
		{"MPS without replicas label is not a card", plain(map[string]string{"nvidia.com/gpu.product": "X", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.memory": "1024"}, "nvidia.com/gpu.shared", 2), 0, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, cards, slots := nodeCards(tt.node, tt.physical, DefaultConfig())
			if !reflect.DeepEqual(cards, tt.want) || slots != tt.wantSlots {
				t.Errorf("cards = %+v, slots %d; want %+v, slots %d", cards, slots, tt.want, tt.wantSlots)
			}
		})
	}
}

// cardPod asks for gpus whole GPUs of 1000 MiB, names a card and a queue.
func cardPodOf(name, card, queue string, gpus int64) *corev1.Pod {
	p := mkPod("team", name, tb.MakeContainer("main").GPUs(gpus).GPUMem(1000).Obj())
	withAnno(p, codec.CardNameAnnotation, card)
	if queue != "" {
		withAnno(p, codec.QueueNameAnnotation, queue)
	}
	return p
}

func bound(p *corev1.Pod, node string) *corev1.Pod {
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	return p
}

func setQueue(t *testing.T, c *Cluster, name, quota string) {
	t.Helper()
	q, probs := NewQueue(name, "Open", map[string]string{codec.CardQuotaAnnotation: quota})
	c.SetQueue(q, probs)
}

func TestCardQuotaGate(t *testing.T) {
	nodes := []*corev1.Node{cardNode("h200-a", "NVIDIA-H200", 4, 80000), cardNode("h800-a", "NVIDIA-H800", 4, 80000), cardNode("a100-a", "NVIDIA-A100", 4, 80000)}
	used := []*corev1.Pod{
		bound(cardPodOf("u1", "NVIDIA-H200", "q1", 2), "h200-a"),
		bound(cardPodOf("u2", "NVIDIA-H200", "q1", 1), "h200-a"),
		bound(cardPodOf("u3", "NVIDIA-H800|NVIDIA-H200", "q1", 1), "h800-a"), // resolved to the node's card: H800
		bound(cardPodOf("other", "NVIDIA-H200", "q2", 1), "h200-a"),
	}
	c := newTestCluster(nodes, used)
	setQueue(t, c, "q1", `{"NVIDIA-H200":3,"NVIDIA-H800":2}`)
	setQueue(t, c, "q2", `{"NVIDIA-H200":1}`)

	t.Run("whole cards: quota full", func(t *testing.T) {
		v := c.Evaluate(cardPodOf("p", "NVIDIA-H200", "q1", 1), EvalOptions{})
		if v.Fits {
			t.Fatalf("fits on %s, want pending", v.Placement.Node)
		}
		if want := "0/3 nodes are available: 1 QueueCardQuotaNotFit, 2 CardModelNotRequested."; v.Summary != want {
			t.Errorf("summary %q, want %q", v.Summary, want)
		}
		ns := v.NodeStatus("h200-a")
		if ns.Check.Detail != "queue q1: NVIDIA-H200 3 of 3 used, the pod needs 1" || ns.Check.Need != 1 || ns.Check.Have != 0 || ns.Check.Total != 3 {
			t.Errorf("h200-a check = %+v", ns.Check)
		}
		if got := v.NodeStatus("a100-a").Check.Detail; got != "node has NVIDIA-A100; the pod asks for NVIDIA-H200" {
			t.Errorf("a100-a detail %q", got)
		}
		if want := "queue q1: NVIDIA-H200 3 of 3 used, the pod needs 1; no quota left"; !reflect.DeepEqual(v.Card.Lines(), []string{want}) {
			t.Errorf("lines %q", v.Card.Lines())
		}
		if len(v.Hints) == 0 || !strings.Contains(strings.Join(v.Hints, "\n"), "queue q1 needs 1 more NVIDIA-H200 (3 of 3 used): raise its volcano.sh/card.quota to 4") {
			t.Errorf("hints %q", v.Hints)
		}
	})
	t.Run("alternative with quota left is taken", func(t *testing.T) {
		v := c.Evaluate(cardPodOf("p", "NVIDIA-H200|NVIDIA-H800", "q1", 1), EvalOptions{})
		if !v.Fits || v.Placement.Node != "h800-a" {
			t.Fatalf("verdict %s", v.Summary)
		}
		want := []string{"queue q1: NVIDIA-H200 3 of 3 used, the pod needs 1; no quota left", "alternative NVIDIA-H800 1 of 2 used, the pod needs 1; fits"}
		if !reflect.DeepEqual(v.Card.Lines(), want) {
			t.Errorf("lines %q, want %q", v.Card.Lines(), want)
		}
	})
	t.Run("preferred alternative wins over a better score", func(t *testing.T) {
		c2 := newTestCluster([]*corev1.Node{cardNode("h200-a", "NVIDIA-H200", 4, 80000), cardNode("h800-a", "NVIDIA-H800", 4, 80000)},
			[]*corev1.Pod{bound(placedOn(mkPod("x", "busy", tb.MakeContainer("main").GPUs(1).GPUMem(1000).Obj()), "h800-a", "h800-a-g0,NVIDIA,1000,0:;"), "h800-a")})
		setQueue(t, c2, "q1", `{"NVIDIA-H200":3,"NVIDIA-H800":2}`)
		// binpack prefers the used h800-a; the card order prefers H200.
		v := c2.Evaluate(cardPodOf("p", "NVIDIA-H200|NVIDIA-H800", "q1", 1), EvalOptions{})
		if !v.Fits || v.Placement.Node != "h200-a" || !reflect.DeepEqual(v.Feasible(), []string{"h200-a", "h800-a"}) {
			t.Fatalf("placement %v feasible %v", v.Placement, v.Feasible())
		}
		if v.NodeStatus("h800-a").CardRank != 1 {
			t.Errorf("h800-a rank %d", v.NodeStatus("h800-a").CardRank)
		}
	})
	t.Run("scale-down returns quota", func(t *testing.T) {
		c3 := newTestCluster(nodes, used)
		setQueue(t, c3, "q1", `{"NVIDIA-H200":3,"NVIDIA-H800":2}`)
		c3.RemovePod("team", "u2")
		v := c3.Evaluate(cardPodOf("p", "NVIDIA-H200", "q1", 1), EvalOptions{})
		if !v.Fits || v.Placement.Node != "h200-a" {
			t.Fatalf("after scale-down: %s", v.Summary)
		}
	})
	t.Run("unlisted card, missing queue, unreadable quota", func(t *testing.T) {
		v := c.Evaluate(cardPodOf("p", "NVIDIA-A100", "q1", 1), EvalOptions{})
		if v.Fits || v.NodeStatus("a100-a").Check.Detail != "queue q1 has no quota for NVIDIA-A100" {
			t.Errorf("unlisted: %s %+v", v.Summary, v.NodeStatus("a100-a").Check)
		}
		v = c.Evaluate(cardPodOf("p", "NVIDIA-H200", "nope", 1), EvalOptions{})
		if v.Fits || v.Card.Lines()[0] != "queue nope does not exist: Volcano does not schedule the pod" {
			t.Errorf("missing queue: %q", v.Card.Lines())
		}
		c4 := newTestCluster(nodes, nil)
		setQueue(t, c4, "bad", `{"NVIDIA-H200":3`)
		if probs := c4.Problems(); len(probs) != 1 || probs[0].Kind != "Queue" || !strings.Contains(probs[0].Message, "denies every card") {
			t.Errorf("problems %+v", probs)
		}
		v = c4.Evaluate(cardPodOf("p", "NVIDIA-H200", "bad", 1), EvalOptions{})
		if v.Fits || !strings.Contains(v.NodeStatus("h200-a").Check.Detail, "cannot be read") {
			t.Errorf("bad quota: %s", v.Summary)
		}
	})
	t.Run("no Volcano, no queue, switched off", func(t *testing.T) {
		c5 := newTestCluster(nodes, used)
		v := c5.Evaluate(cardPodOf("p", "NVIDIA-H200", "q1", 1), EvalOptions{})
		if !v.Fits || v.Card == nil || v.Card.Enforced {
			t.Errorf("without Volcano: fits %v card %+v", v.Fits, v.Card)
		}
		if v := c.Evaluate(cardPodOf("p", "NVIDIA-H200", "", 1), EvalOptions{}); v.Card != nil || !v.Fits {
			t.Errorf("without a queue: card %+v", v.Card)
		}
		cfg := DefaultConfig()
		cfg.CardQuota = CardQuotaOff
		c6 := NewCluster(cfg)
		for _, n := range nodes {
			c6.SetNode(n)
		}
		for _, p := range used {
			c6.SetPod(p)
		}
		setQueue(t, c6, "q1", `{"NVIDIA-H200":3}`)
		if v := c6.Evaluate(cardPodOf("p", "NVIDIA-H200", "q1", 1), EvalOptions{}); !v.Fits || v.Card.Enforced || v.Card.Fits {
			t.Errorf("switched off: fits %v card %+v", v.Fits, v.Card)
		}
	})
	t.Run("capacity stops at the queue's cards", func(t *testing.T) {
		c7 := newTestCluster(nodes, nil)
		setQueue(t, c7, "q1", `{"NVIDIA-H200":3,"NVIDIA-H800":2}`)
		got := c7.Capacity(cardPodOf("p", "NVIDIA-H200|NVIDIA-H800", "q1", 1), 100)
		want := Capacity{Copies: 5, Nodes: []NodeCopies{{"h200-a", 3}, {"h800-a", 2}}}
		// The GPUs would take more: the queue's card quota is named as the limit.
		if got.Limit == nil || got.Limit.Code != QueueCardQuotaNotFit {
			t.Errorf("limit %+v, want the queue's card quota", got.Limit)
		}
		got.Limit = nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("capacity %+v, want %+v", got, want)
		}
	})
}

func TestCardOnlyPod(t *testing.T) {
	mig := cardNode("mig-a", "NVIDIA-H200", 0, 0, "nvidia.com/mig-1g.18gb", 3)
	delete(mig.Annotations, codec.NodeRegisterAnnotation)
	c := newTestCluster([]*corev1.Node{mig, cardNode("h200-a", "NVIDIA-H200", 4, 80000)}, nil)
	setQueue(t, c, "q1", `{"NVIDIA-H200/mig-1g.18gb-mixed":1}`)
	migPod := func(name string) *corev1.Pod {
		p := mkPod("team", name, corev1.Container{Name: "main", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{"nvidia.com/mig-1g.18gb": resource.MustParse("1")}}})
		return withAnno(p, codec.CardNameAnnotation, "NVIDIA-H200/mig-1g.18gb-mixed", codec.QueueNameAnnotation, "q1")
	}
	v := c.Evaluate(migPod("p1"), EvalOptions{})
	if !v.Fits || !v.NoGPURequest || !reflect.DeepEqual(v.Feasible(), []string{"mig-a"}) || v.Card.Alternatives[0].Resource != "nvidia.com/mig-1g.18gb" {
		t.Fatalf("first MIG pod: %s card %+v", v.Summary, v.Card)
	}
	c.SetPod(bound(migPod("p1"), "mig-a"))
	v = c.Evaluate(migPod("p2"), EvalOptions{})
	if v.Fits || v.NodeStatus("mig-a").Check.Detail != "queue q1: NVIDIA-H200/mig-1g.18gb-mixed 1 of 1 used, the pod needs 1" {
		t.Fatalf("second MIG pod: %s", v.Summary)
	}
	us := c.QueueUsages()
	want := []QueueUsage{{Queue: "q1", State: "Open", PendingPods: 0, Cards: []QueueCard{
		{Card: "NVIDIA-H200/mig-1g.18gb-mixed", Quota: 1, Listed: true, Used: 1, Physical: 3, Free: 2}}}}
	if !reflect.DeepEqual(us, want) {
		t.Errorf("queue usage %+v, want %+v", us, want)
	}
}

func TestEnqueue(t *testing.T) {
	nodes := []*corev1.Node{cardNode("a", "NVIDIA-GeForce-RTX-4090", 4, 24000), cardNode("b", "NVIDIA-GeForce-RTX-4090-D", 4, 24000)}
	c := newTestCluster(nodes, []*corev1.Pod{bound(cardPodOf("run", "NVIDIA-GeForce-RTX-4090", "q1", 2), "a")})
	setQueue(t, c, "q1", `{"NVIDIA-GeForce-RTX-4090":2,"NVIDIA-GeForce-RTX-4090-D":2}`)
	pg := func(name, phase, request string) {
		g, probs := NewPodGroup("team", name, "q1", 2, phase, map[string]string{codec.CardRequestAnnotation: request})
		c.SetPodGroup(g, probs)
	}
	pg("job-a", "Pending", `{"NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D":2}`)
	s := c.Enqueue("team", "job-a")
	if s == nil || !s.Fits || s.FromPods || s.Cards[0].Capability != 4 || s.Cards[0].Allocated != 2 {
		t.Fatalf("A|B job: %+v", s)
	}
	pg("job-b", "Inqueue", `{"NVIDIA-GeForce-RTX-4090-D":1}`)
	pg("job-c", "Pending", `{"NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D":2}`)
	s = c.Enqueue("team", "job-c")
	want := "job team/job-c in queue q1: NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D: 2 asked (volcano.sh/card.request) + 2 allocated + 1 in queue - 0 elastic = 5 > quota 4: cannot enqueue"
	if s.Fits || !reflect.DeepEqual(s.Lines(), []string{want}) {
		t.Errorf("lines %q, want %q", s.Lines(), want)
	}
	// Once the job's pods exist, their cards replace the annotation; a pending pod shows the check.
	p := withAnno(cardPodOf("c-0", "NVIDIA-GeForce-RTX-4090-D", "", 1), codec.GroupNameAnnotation, "job-c")
	c.SetPod(p)
	v := c.Evaluate(p, EvalOptions{})
	if v.Enqueue == nil || !v.Enqueue.FromPods || !v.Enqueue.Fits || v.Card == nil || v.Card.Queue != "q1" {
		t.Errorf("pod of job-c: enqueue %+v card %+v", v.Enqueue, v.Card)
	}
	if _, probs := NewPodGroup("team", "bad", "q1", 1, "Pending", map[string]string{codec.CardRequestAnnotation: `{"A|":1}`}); len(probs) != 1 || probs[0].Object != "team/bad" {
		t.Errorf("bad request problems %+v", probs)
	}
}

// TestCardCacheMatchesRebuild: after random pod, node and PodGroup changes, the incrementally kept card
// usage of one cluster equals that of a twin given the same changes but rebuilt from scratch every step.
func TestCardCacheMatchesRebuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	products := []string{"NVIDIA-H200", "NVIDIA-H800", "NVIDIA-A100"}
	inc, rebuilt := NewCluster(DefaultConfig()), NewCluster(DefaultConfig())
	both := func(f func(c *Cluster)) { f(inc); f(rebuilt) }
	for i := 0; i < 6; i++ {
		n := cardNode(fmt.Sprintf("n%d", i), products[i%3], 4, 80000)
		both(func(c *Cluster) { c.SetNode(n) })
	}
	both(func(c *Cluster) {
		setQueue(t, c, "q1", `{"NVIDIA-H200":50,"NVIDIA-H800":50}`)
		setQueue(t, c, "q2", `{"NVIDIA-A100":50}`)
	})
	for step := 0; step < 600; step++ {
		name := fmt.Sprintf("p%d", rng.IntN(40))
		switch op := rng.IntN(10); {
		case op < 5:
			card := []string{"NVIDIA-H200", "NVIDIA-H800|NVIDIA-H200", "NVIDIA-A100"}[rng.IntN(3)]
			p := cardPodOf(name, card, []string{"q1", "q2", ""}[rng.IntN(3)], int64(1+rng.IntN(2)))
			if rng.IntN(3) == 0 {
				withAnno(p, codec.GroupNameAnnotation, "g1")
			}
			if rng.IntN(4) > 0 {
				bound(p, fmt.Sprintf("n%d", rng.IntN(6)))
			}
			both(func(c *Cluster) { c.SetPod(p) })
		case op < 7:
			both(func(c *Cluster) { c.RemovePod("team", name) })
		case op < 8:
			n := cardNode(fmt.Sprintf("n%d", rng.IntN(6)), products[rng.IntN(3)], 4, 80000)
			both(func(c *Cluster) { c.SetNode(n) })
		case op < 9:
			g, probs := NewPodGroup("team", "g1", []string{"q1", "q2"}[rng.IntN(2)], 1, "Running", nil)
			both(func(c *Cluster) { c.SetPodGroup(g, probs) })
		default:
			both(func(c *Cluster) { c.RemovePodGroup("team", "g1") })
		}
		got := inc.QueueUsages()
		rebuilt.invalidateCards()
		if want := rebuilt.QueueUsages(); !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: incremental %+v, rebuilt %+v", step, got, want)
		}
	}
}

// TestCardEvaluateConcurrent: evaluations of a card pod run in parallel node ranges and in concurrent
// callers (the extender's filter and prioritize under a reader lock) right after the card cache was dropped;
// every answer equals the sequential one. Run with -race to see the shared state stays read-only.
func TestCardEvaluateConcurrent(t *testing.T) {
	defer func(n int) { parallelMinNodes = n }(parallelMinNodes)
	products := []string{"NVIDIA-H200", "NVIDIA-H800", "NVIDIA-A100", "NVIDIA-L4"}
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	for i := 0; i < 64; i++ {
		name := fmt.Sprintf("n%02d", i)
		nodes = append(nodes, cardNode(name, products[i%4], 4, 80000))
		if i%4 == 0 && i < 12 {
			pods = append(pods, bound(cardPodOf("u"+name, "NVIDIA-H200", "q1", 1), name))
		}
	}
	c := newTestCluster(nodes, pods)
	setQueue(t, c, "q1", `{"NVIDIA-H200":3,"NVIDIA-H800":1}`)
	pod := cardPodOf("p", "NVIDIA-H200|NVIDIA-H800", "q1", 1)
	parallelMinNodes = 1 << 30
	want := c.Evaluate(pod, EvalOptions{})
	if !want.Fits || want.Placement.Node != "n01" {
		t.Fatalf("sequential verdict: %s", want.Summary)
	}
	parallelMinNodes = 1
	for round := 0; round < 20; round++ {
		c.invalidateCards()
		got := make([]*Verdict, 4)
		var wg sync.WaitGroup
		for i := range got {
			wg.Add(1)
			go func() { defer wg.Done(); got[i] = c.Evaluate(pod, EvalOptions{}) }()
		}
		wg.Wait()
		for _, v := range got {
			if d := VerdictDiff(v, want); d != "" {
				t.Fatalf("round %d: concurrent verdict differs: %s", round, d)
			}
		}
	}
}

// TestSubsetAfterNodeChurn: after nodes come and go, a candidate list (unsorted, with duplicates and unknown
// names) selects exactly the known nodes, in name order.
func TestSubsetAfterNodeChurn(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := NewCluster(DefaultConfig())
	live := map[string]bool{}
	for step := 0; step < 300; step++ {
		name := fmt.Sprintf("n%02d", rng.IntN(30))
		if rng.IntN(3) == 0 {
			c.RemoveNode(name)
			delete(live, name)
		} else {
			c.SetNode(mkNode(name, gpus(name, 1, 1000)))
			live[name] = true
		}
		var ask, want []string
		for i := 0; i < 30; i++ {
			n := fmt.Sprintf("n%02d", i)
			if rng.IntN(2) == 0 {
				ask = append(ask, n, n)
				if live[n] {
					want = append(want, n)
				}
			}
		}
		rng.Shuffle(len(ask), func(i, j int) { ask[i], ask[j] = ask[j], ask[i] })
		ask = append(ask, "unknown")
		nodes, names := c.subset(ask)
		if !reflect.DeepEqual(names, want) && (len(names) != 0 || len(want) != 0) {
			t.Fatalf("step %d: subset %v, want %v", step, names, want)
		}
		for i, n := range nodes {
			if n.Name != names[i] {
				t.Fatalf("step %d: node %s at name %s", step, n.Name, names[i])
			}
		}
	}
}

func TestCardNameRules(t *testing.T) {
	labels := []struct {
		key            string
		prefix, domain string
		ok             bool
	}{
		{"nvidia.com/gpu.product", "nvidia.com/gpu", "nvidia.com", true},
		{"nvidia.com/mig.product", "", "", false}, // MIG products are not the card model
		{"nvidia.com/gpu.count", "", "", false},
		{"gpu.product", "", "", false},
		{"a/b/gpu.product", "a/b/gpu", "a/b", true},
		{"a/mig-1g/gpu.product", "", "", false},
	}
	for _, c := range labels {
		prefix, domain, ok := CardProductLabel(c.key)
		if prefix != c.prefix || domain != c.domain || ok != c.ok {
			t.Errorf("CardProductLabel(%q) = %q, %q, %v; want %q, %q, %v", c.key, prefix, domain, ok, c.prefix, c.domain, c.ok)
		}
	}
	resources := map[string]string{
		"NVIDIA-A100-SXM4-80GB/mig-1g.10gb-mixed": "nvidia.com/mig-1g.10gb",
		"NVIDIA-H200/mps-20g*1/4":                 "nvidia.com/gpu.shared",
		"NVIDIA-H200":                             "nvidia.com/gpu",
		"/mig-1g.10gb-mixed":                      "nvidia.com/gpu",
		"NVIDIA-H200/mig-1g":                      "nvidia.com/gpu",
	}
	for card, want := range resources {
		if got := CardResourceOf(card, "nvidia.com/gpu"); got != want {
			t.Errorf("CardResourceOf(%q) = %q, want %q", card, got, want)
		}
	}
}
