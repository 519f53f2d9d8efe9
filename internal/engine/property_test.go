package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// propWorld is the ground truth a property test keeps beside the Cluster: the objects it was given.
type propWorld struct {
	nodes  []*corev1.Node
	placed map[string]*corev1.Pod // key -> the pod as bind left it
	quotas []*corev1.ResourceQuota
	want   map[string][]GPUUse // key -> the usage expected from the placement the engine reported
}

// randomNodes builds n nodes with 2-4 GPUs each, 2-4 slots per GPU, 8-24 GiB, on NUMA 0 or 1.
func randomNodes(rng *rand.Rand, n int) []*corev1.Node {
	var out []*corev1.Node
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("node-%d", i)
		var devs []codec.DeviceInfo
		for g := 0; g < 2+rng.IntN(3); g++ {
			devs = append(devs, codec.DeviceInfo{
				ID: fmt.Sprintf("%s-g%d", name, g), Index: g, Count: int32(2 + rng.IntN(3)),
				Devmem: int64(8+rng.IntN(17)) * 1024, Devcore: 100, Type: "NVIDIA-A10", Numa: rng.IntN(2), Health: true,
			})
		}
		out = append(out, mkNode(name, devs))
	}
	return out
}

// randomGPUContainer asks for 1-2 GPUs with memory in MiB, in percent or unset, and 0-100 cores or unset.
func randomGPUContainer(rng *rand.Rand, name string) corev1.Container {
	c := tb.MakeContainer(name).GPUs(int64(1 + rng.IntN(2)))
	switch r := rng.IntN(10); {
	case r < 5:
		c.GPUMem(int64(256 + rng.IntN(48)*256))
	case r < 9:
		c.GPUMemPercent(int64(10 * (1 + rng.IntN(10))))
	}
	if rng.IntN(5) > 0 {
		c.GPUCores(int64(rng.IntN(101)))
	}
	return c.Obj()
}

var (
	propGPUPolicies  = []string{"", "", "binpack", "spread", "mutex", "binpack,mutex", "topology-aware", "numa"}
	propNodePolicies = []string{"", "", "binpack", "spread"}
)

// randomPod is a pod with 1-2 app containers (the first asks for GPUs), sometimes a GPU-less sidecar,
// sometimes an init container with GPUs, and random policies.
func randomPod(rng *rand.Rand, ns, name string) *corev1.Pod {
	cs := []corev1.Container{randomGPUContainer(rng, "main")}
	if rng.IntN(3) == 0 {
		cs = append(cs, randomGPUContainer(rng, "second"))
	}
	if rng.IntN(4) == 0 {
		cs = append(cs, tb.MakeContainer("sidecar").Obj())
	}
	p := mkPod(ns, name, cs...)
	if rng.IntN(4) == 0 {
		p.Spec.InitContainers = append(p.Spec.InitContainers, randomGPUContainer(rng, "init"))
		if rng.IntN(3) == 0 {
			p.Spec.InitContainers = append(p.Spec.InitContainers, tb.MakeContainer("init-plain").Obj())
		}
	}
	if v := propGPUPolicies[rng.IntN(len(propGPUPolicies))]; v != "" {
		withAnno(p, AnnoGPUPolicy, v)
	}
	if v := propNodePolicies[rng.IntN(len(propNodePolicies))]; v != "" {
		withAnno(p, AnnoNodePolicy, v)
	}
	if rng.IntN(10) == 0 {
		withAnno(p, AnnoNumaBind, "true")
	}
	return p
}

// bindPod is what the extender's bind leaves on the pod: a copy carrying the placement's annotations.
func bindPod(pod *corev1.Pod, p *Placement, now time.Time) *corev1.Pod {
	placed := pod.DeepCopy()
	if placed.Annotations == nil {
		placed.Annotations = map[string]string{}
	}
	for k, v := range p.Annotations(now) {
		placed.Annotations[k] = v
	}
	placed.Spec.NodeName = p.Node
	placed.Status.Phase = corev1.PodPending
	return placed
}

// expectedUses computes, independently of the engine, what a placement holds per GPU: app containers add
// up, init containers count as their peak, each field separately. Sorted by UUID.
func expectedUses(p *Placement) []GPUUse {
	app := map[string]GPUUse{}
	peak := map[string]GPUUse{}
	for _, c := range p.Containers {
		if c.Init {
			for _, d := range c.Devices {
				u := peak[d.UUID]
				u.UUID, u.Slots, u.Mem, u.Cores = d.UUID, max(u.Slots, 1), max(u.Mem, d.MemMiB), max(u.Cores, d.Cores)
				peak[d.UUID] = u
			}
			continue
		}
		for _, d := range c.Devices {
			u := app[d.UUID]
			u.UUID = d.UUID
			u.Slots++
			u.Mem += d.MemMiB
			u.Cores += d.Cores
			app[d.UUID] = u
		}
	}
	for id, p := range peak {
		a := app[id]
		app[id] = GPUUse{UUID: id, Slots: max(a.Slots, p.Slots), Mem: max(a.Mem, p.Mem), Cores: max(a.Cores, p.Cores)}
	}
	return sortUses(mapValues(app))
}

func mapValues(m map[string]GPUUse) []GPUUse {
	out := make([]GPUUse, 0, len(m))
	for _, u := range m {
		out = append(out, u)
	}
	return out
}

func sortUses(u []GPUUse) []GPUUse {
	out := append([]GPUUse(nil), u...)
	sort.Slice(out, func(i, j int) bool { return out[i].UUID < out[j].UUID })
	return out
}

// usageSnapshot is every GPU's usage, keyed node/uuid.
func usageSnapshot(c *Cluster) map[string][3]int64 {
	out := map[string][3]int64{}
	for _, name := range c.NodeNames() {
		n := c.Node(name)
		for _, g := range n.GPUs {
			out[name+"/"+g.UUID] = [3]int64{int64(g.UsedSlots), g.UsedMem, g.UsedCores}
		}
	}
	return out
}

// rebuild builds a fresh cluster from the world's objects in a shuffled order; with pods first, SetNode
// has to rebuild the usage from pods it already counts.
func (w *propWorld) rebuild(rng *rand.Rand) *Cluster {
	c := NewCluster(DefaultConfig())
	nodes := append([]*corev1.Node(nil), w.nodes...)
	rng.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	pods := w.pods()
	rng.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	podsFirst := rng.IntN(2) == 0
	if podsFirst {
		for _, p := range pods {
			c.SetPod(p)
		}
	}
	for _, q := range w.quotas {
		c.SetQuota(q)
	}
	for _, n := range nodes {
		c.SetNode(n)
	}
	if !podsFirst {
		for _, p := range pods {
			c.SetPod(p)
		}
	}
	return c
}

func (w *propWorld) pods() []*corev1.Pod {
	keys := make([]string, 0, len(w.placed))
	for k := range w.placed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*corev1.Pod, 0, len(keys))
	for _, k := range keys {
		out = append(out, w.placed[k])
	}
	return out
}

// checkInvariants checks capacities, the incremental usage against a rebuild and against the usage the
// placements imply, and the namespace quotas.
func (w *propWorld) checkInvariants(t *testing.T, step int, c *Cluster, rng *rand.Rand) {
	t.Helper()
	implied := map[string][3]int64{}
	for key, uses := range w.want {
		node := w.placed[key].Annotations[codec.PodNodeAnnotation]
		for _, u := range uses {
			k := node + "/" + u.UUID
			v := implied[k]
			implied[k] = [3]int64{v[0] + int64(u.Slots), v[1] + u.Mem, v[2] + u.Cores}
		}
	}
	for _, name := range c.NodeNames() {
		for _, g := range c.Node(name).GPUs {
			if g.UsedSlots < 0 || g.UsedMem < 0 || g.UsedCores < 0 {
				t.Fatalf("step %d: %s/%s has negative usage: %d slots, %d MiB, %d %%", step, name, g.UUID, g.UsedSlots, g.UsedMem, g.UsedCores)
			}
			if g.UsedSlots > g.Slots || g.UsedMem > g.TotalMem || g.UsedCores > g.TotalCores {
				t.Fatalf("step %d: %s/%s over capacity: %d/%d slots, %d/%d MiB, %d/%d %%", step, name, g.UUID,
					g.UsedSlots, g.Slots, g.UsedMem, g.TotalMem, g.UsedCores, g.TotalCores)
			}
			k := name + "/" + g.UUID
			if got, want := [3]int64{int64(g.UsedSlots), g.UsedMem, g.UsedCores}, implied[k]; got != want {
				t.Fatalf("step %d: %s usage %v, placements imply %v", step, k, got, want)
			}
		}
	}
	fresh := w.rebuild(rng)
	if got, want := usageSnapshot(c), usageSnapshot(fresh); !reflect.DeepEqual(got, want) {
		t.Fatalf("step %d: incremental usage differs from a rebuild:\nincremental %v\nrebuild     %v", step, got, want)
	}
	for _, q := range w.quotas {
		got, want := c.Quota(q.Namespace), fresh.Quota(q.Namespace)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: quota of %s %+v, rebuild says %+v", step, q.Namespace, got, want)
		}
	}
}

// checkQuotaHeld fails when a namespace's HAMi-accounted usage is above its limit.
func checkQuotaHeld(t *testing.T, step int, c *Cluster, ns, pod string) {
	t.Helper()
	q := c.Quota(ns)
	if q.Memory != nil && q.Memory.Used > q.Memory.Limit {
		t.Errorf("step %d: placing %s pushed %s memory quota to %d of %d MiB", step, pod, ns, q.Memory.Used, q.Memory.Limit)
	}
	if q.Cores != nil && q.Cores.Used > q.Cores.Limit {
		t.Errorf("step %d: placing %s pushed %s cores quota to %d of %d %%", step, pod, ns, q.Cores.Used, q.Cores.Limit)
	}
}

// TestQuotaInitAndAppContainers: a pod the engine says fits must not push its namespace's HAMi-accounted
// usage over the quota. The gate checks each init container alone and the app containers cumulatively, and a
// placed pod charges the quota max(app sum, biggest init container): the two rules must agree.
func TestQuotaInitAndAppContainers(t *testing.T) {
	other := placedOn(mkPod("other", "x", tb.MakeContainer("c").GPUs(1).GPUMem(8000).Obj()), "n1", "n1-g0,NVIDIA,8000,0:;")
	cases := []struct {
		name   string
		quota  *corev1.ResourceQuota
		pods   []*corev1.Pod
		policy string
		inits  []corev1.Container
		apps   []corev1.Container
	}{
		// init takes g0 and g1 (2 x 1000), main takes g0 (5000): counted g0 5000 + g1 1000 = 6000 > 5000.
		{name: "init and app memory", quota: mkQuota("ns", "q", "limits.nvidia.com/gpumem", "5000"),
			inits: []corev1.Container{tb.MakeContainer("init").GPUs(2).GPUMem(1000).GPUCores(0).Obj()}, apps: []corev1.Container{tb.MakeContainer("main").GPUs(1).GPUMem(5000).GPUCores(0).Obj()}},
		// The same with cores: counted 50 + 10 = 60 > 50.
		{name: "init and app cores", quota: mkQuota("ns", "q", "limits.nvidia.com/gpucores", "50"),
			inits: []corev1.Container{tb.MakeContainer("init").GPUs(2).GPUMem(1000).GPUCores(10).Obj()}, apps: []corev1.Container{tb.MakeContainer("main").GPUs(1).GPUMem(1000).GPUCores(50).Obj()}},
		// Two init containers, binpack: init-a (3000) does not fit on the fuller g0 and takes g1, init-b (2000)
		// takes g0: counted g1 3000 + g0 2000 = 5000 > 4000, although init-b also fits on g1 within the quota.
		{name: "two init containers", quota: mkQuota("ns", "q", "limits.nvidia.com/gpumem", "4000"),
			pods: []*corev1.Pod{other}, policy: "binpack",
			inits: []corev1.Container{tb.MakeContainer("init-a").GPUs(1).GPUMem(3000).GPUCores(0).Obj(), tb.MakeContainer("init-b").GPUs(1).GPUMem(2000).GPUCores(0).Obj()},
			apps:  []corev1.Container{tb.MakeContainer("main").Obj()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 2, 10240))}, tc.pods, tc.quota)
			pod := mkPod("ns", "p", tc.apps...)
			pod.Spec.InitContainers = tc.inits
			if tc.policy != "" {
				withAnno(pod, AnnoGPUPolicy, tc.policy)
			}
			v := c.Evaluate(pod, EvalOptions{})
			if !v.Fits {
				return // refusing the pod keeps the quota
			}
			c.SetPod(bindPod(pod, v.Placement, time.Unix(1_800_000_000, 0)))
			q := c.Quota("ns")
			if q.Memory != nil && q.Memory.Used > q.Memory.Limit || q.Cores != nil && q.Cores.Used > q.Cores.Limit {
				t.Errorf("pod fits with placement %s but then counts %s against the quota: memory %+v, cores %+v",
					placementGPUs(v.Placement), mustJSONString(t, c.Pod("ns", "p").Uses), q.Memory, q.Cores)
			}
		})
	}
}

func mustJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkSameVerdict fails unless two verdicts encode to the same JSON.
func checkSameVerdict(t *testing.T, step int, what string, a, b *Verdict) {
	t.Helper()
	ja, jb := mustJSONString(t, a), mustJSONString(t, b)
	if ja != jb {
		t.Fatalf("step %d: %s differ:\n%s\n%s", step, what, ja, jb)
	}
}

// TestPropertyRandomPlacement drives a small cluster through random placements, removals and node
// updates, checking after every step that usage stays within capacity and equals a from-scratch rebuild.
func TestPropertyRandomPlacement(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			runPropertyRandomPlacement(t, seed, 400)
		})
	}
}

func runPropertyRandomPlacement(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 99))
	w := &propWorld{
		nodes:  randomNodes(rng, 3+rng.IntN(2)),
		placed: map[string]*corev1.Pod{},
		want:   map[string][]GPUUse{},
		quotas: []*corev1.ResourceQuota{
			mkQuota("team-q", "mem", "limits.nvidia.com/gpumem", "40000"),
			mkQuota("team-q", "cores", "limits.nvidia.com/gpucores", "300"),
		},
	}
	c := NewCluster(DefaultConfig())
	for _, n := range w.nodes {
		c.SetNode(n)
	}
	for _, q := range w.quotas {
		c.SetQuota(q)
	}
	namespaces := []string{"team-a", "team-b", "team-q"}
	placedCount, fitted := 0, 0
	for step := 0; step < steps; step++ {
		switch op := rng.IntN(20); {
		case op < 12 || len(w.placed) == 0:
			ns := namespaces[rng.IntN(len(namespaces))]
			pod := randomPod(rng, ns, fmt.Sprintf("p%d", step))
			key := ns + "/" + pod.Name
			v := c.Evaluate(pod, EvalOptions{})
			again := c.Evaluate(pod, EvalOptions{})
			if !reflect.DeepEqual(v, again) {
				checkSameVerdict(t, step, "two evaluations of "+key, v, again)
				t.Fatalf("step %d: two evaluations of %s are not DeepEqual", step, key)
			}
			if !v.Fits {
				if v.Placement != nil || len(v.Feasible()) != 0 {
					t.Fatalf("step %d: %s does not fit but has placement %+v, feasible %v", step, key, v.Placement, v.Feasible())
				}
				continue
			}
			fitted++
			if len(v.Feasible()) == 0 || v.Feasible()[0] != v.Placement.Node {
				t.Fatalf("step %d: %s placed on %s but feasible is %v", step, key, v.Placement.Node, v.Feasible())
			}
			// The chosen node alone must give the same answer.
			only := c.Evaluate(pod, EvalOptions{Nodes: []string{v.Placement.Node}})
			if !only.Fits {
				t.Fatalf("step %d: %s fits on %s but not when evaluated on that node alone: %s", step, key, v.Placement.Node, only.Summary)
			}
			if got, want := mustJSONString(t, only.Placement), mustJSONString(t, v.Placement); got != want {
				t.Fatalf("step %d: %s placement on the node alone\n%s\nwant\n%s", step, key, got, want)
			}
			checkPlacementShape(t, step, c, pod, v)
			placed := bindPod(pod, v.Placement, time.Unix(int64(1_800_000_000+step), 0))
			if probs := c.SetPod(placed); len(probs) > 0 {
				t.Fatalf("step %d: setting the bound pod %s reported %v", step, key, probs)
			}
			w.placed[key] = placed
			w.want[key] = expectedUses(v.Placement)
			placedCount++
			alloc := c.Pod(ns, pod.Name)
			if alloc == nil {
				t.Fatalf("step %d: bound pod %s is not counted", step, key)
			}
			if alloc.Node != v.Placement.Node {
				t.Fatalf("step %d: %s counted on %s, placed on %s", step, key, alloc.Node, v.Placement.Node)
			}
			if got, want := sortUses(alloc.Uses), w.want[key]; !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d: %s counted uses %+v, placement says %+v", step, key, got, want)
			}
			checkQuotaHeld(t, step, c, ns, key)
		case op < 17:
			pods := w.pods()
			p := pods[rng.IntN(len(pods))]
			key := p.Namespace + "/" + p.Name
			c.RemovePod(p.Namespace, p.Name)
			if c.Pod(p.Namespace, p.Name) != nil {
				t.Fatalf("step %d: removed pod %s is still counted", step, key)
			}
			delete(w.placed, key)
			delete(w.want, key)
		default:
			n := w.nodes[rng.IntN(len(w.nodes))]
			c.SetNode(n)
		}
		w.checkInvariants(t, step, c, rng)
		if step%20 == 0 {
			// The same pod on a cluster built from the same objects in another order gives the same verdict.
			probe := randomPod(rng, namespaces[rng.IntN(len(namespaces))], "probe")
			fresh := w.rebuild(rng)
			for _, opts := range []EvalOptions{{}, {DetailAll: true}} {
				a, b := c.Evaluate(probe, opts), fresh.Evaluate(probe, opts)
				checkSameVerdict(t, step, "verdicts on the incremental and a shuffled rebuilt cluster", a, b)
			}
		}
	}
	if placedCount < steps/10 || fitted == 0 {
		t.Fatalf("only %d of %d steps placed a pod: the random cluster is too small to test anything", placedCount, steps)
	}
	t.Logf("%d pods placed, %d still counted", placedCount, len(w.placed))
}

// checkPlacementShape checks the reported placement against the request: every container with GPUs has its
// count of distinct GPUs on the chosen node, with the memory and cores it asked for.
func checkPlacementShape(t *testing.T, step int, c *Cluster, pod *corev1.Pod, v *Verdict) {
	t.Helper()
	n := c.Node(v.Placement.Node)
	if len(v.Placement.Containers) != len(v.Request.Containers) {
		t.Fatalf("step %d: %d containers placed, %d ask for GPUs", step, len(v.Placement.Containers), len(v.Request.Containers))
	}
	for i, cp := range v.Placement.Containers {
		r := v.Request.Containers[i]
		if cp.Name != r.Name || cp.Init != r.Init || cp.Index != r.Index || len(cp.Devices) != r.Count {
			t.Fatalf("step %d: container %d placed as %+v, asked %+v", step, i, cp, r)
		}
		seen := map[string]bool{}
		for _, d := range cp.Devices {
			g := n.GPUByUUID(d.UUID)
			if g == nil || seen[d.UUID] {
				t.Fatalf("step %d: container %s got GPU %s twice or not on node %s", step, cp.Name, d.UUID, n.Name)
			}
			seen[d.UUID] = true
			if d.MemMiB != r.MemoryOn(g.TotalMem) || d.Cores != r.Cores || d.Index != g.Index {
				t.Fatalf("step %d: container %s on %s got %+v; asked %d MiB %d %%", step, cp.Name, d.UUID, d, r.MemoryOn(g.TotalMem), r.Cores)
			}
		}
	}
}

// TestDeterminismShuffledCluster evaluates the same pods on clusters built from the same objects in many
// orders: the verdicts must encode identically.
func TestDeterminismShuffledCluster(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	w := &propWorld{nodes: randomNodes(rng, 4), placed: map[string]*corev1.Pod{}, want: map[string][]GPUUse{},
		quotas: []*corev1.ResourceQuota{mkQuota("team-q", "a", "limits.nvidia.com/gpumem", "30000"),
			mkQuota("team-q", "b", "limits.nvidia.com/gpumem", "30000")}}
	c := w.rebuild(rng)
	// Fill the cluster part way with pods placed by the engine itself.
	for i := 0; i < 15; i++ {
		pod := randomPod(rng, "team-a", fmt.Sprintf("fill-%d", i))
		if v := c.Evaluate(pod, EvalOptions{}); v.Fits {
			placed := bindPod(pod, v.Placement, time.Unix(1_800_000_000, 0))
			c.SetPod(placed)
			w.placed[placed.Namespace+"/"+placed.Name] = placed
		}
	}
	if len(w.placed) < 3 {
		t.Fatalf("only %d filler pods fit", len(w.placed))
	}
	for i := 0; i < 60; i++ {
		probe := randomPod(rng, []string{"team-a", "team-q"}[i%2], "probe")
		if i%3 == 0 {
			// A pod that is already counted is evaluated without its own usage: this too must not depend on order.
			probe = w.pods()[rng.IntN(len(w.placed))]
		}
		opts := EvalOptions{DetailAll: i%2 == 0}
		want := c.Evaluate(probe, opts)
		if again := c.Evaluate(probe, opts); !reflect.DeepEqual(want, again) {
			checkSameVerdict(t, i, "two evaluations", want, again)
			t.Fatalf("probe %d: two evaluations are not DeepEqual", i)
		}
		for j := 0; j < 3; j++ {
			checkSameVerdict(t, i, "verdicts on shuffled clusters", want, w.rebuild(rng).Evaluate(probe, opts))
		}
	}
}

// TestPropertyCountedPodIsReleased: Evaluate documents that a pod already counted is evaluated as if its own
// usage were released, so on every node alone its gates, GPU choice and reasons must equal those of the same
// pod on the cluster without it. Node scores and the namespace quota figures are left out here:
// TestCountedPodNodeScore and TestCountedPodQuotaFigures cover them.
func TestPropertyCountedPodIsReleased(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	checked := 0
	for i := 0; i < 40; i++ {
		w := &propWorld{nodes: randomNodes(rng, 3), placed: map[string]*corev1.Pod{},
			quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "60000")}}
		c := w.rebuild(rng)
		for j := 0; j < 8; j++ {
			p := randomPod(rng, "ns", fmt.Sprintf("p%d", j))
			if v := c.Evaluate(p, EvalOptions{}); v.Fits {
				placed := bindPod(p, v.Placement, time.Unix(1_800_000_000, 0))
				c.SetPod(placed)
				w.placed["ns/"+p.Name] = placed
			}
		}
		for _, p := range w.pods() {
			without := w.rebuild(rng)
			without.RemovePod(p.Namespace, p.Name)
			for _, node := range c.NodeNames() {
				opts := EvalOptions{DetailAll: true, Nodes: []string{node}}
				with, want := withoutSelfFigures(c.Evaluate(p, opts)), withoutSelfFigures(without.Evaluate(p, opts))
				checkSameVerdict(t, i, "verdicts on "+node+" of counted pod "+p.Name+" and of the pod on the cluster without it", with, want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no pod was placed")
	}
}

// withoutSelfFigures clears the node scores, the summary that quotes them, the namespace quota and the
// hints that quote it.
func withoutSelfFigures(v *Verdict) *Verdict {
	v.Summary = ""
	v.Quota = QuotaStatus{}
	var hints []string
	for _, h := range v.Hints {
		if !strings.HasPrefix(h, "namespace ") {
			hints = append(hints, h)
		}
	}
	v.Hints = hints
	if v.Placement != nil {
		v.Placement.Score = 0
	}
	for i := range v.Nodes() {
		v.Nodes()[i].Score = 0
	}
	return v
}

// TestCountedPodNodeScore: a counted pod is evaluated as if its own usage were released, so its own node
// must not score its usage. Nodes a and b are identical and empty but for the pod itself on b: released,
// both score 0 and binpack's tie goes to a.
func TestCountedPodNodeScore(t *testing.T) {
	nodes := []*corev1.Node{mkNode("a", gpus("a", 1, 16384)), mkNode("b", gpus("b", 1, 16384))}
	pod := placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(4096).GPUCores(25).Obj()), "b", "b-g0,NVIDIA,4096,25:;")
	c := newTestCluster(nodes, []*corev1.Pod{pod})
	v := c.Evaluate(pod, EvalOptions{})
	if !v.Fits {
		t.Fatalf("does not fit: %s", v.Summary)
	}
	if got := v.NodeStatus("b").Score; got != 0 {
		t.Errorf("node b scores %v for the pod's own usage; released it scores 0", got)
	}
	if v.Placement.Node != "a" || !reflect.DeepEqual(v.Feasible(), []string{"a", "b"}) {
		t.Errorf("placed on %s, feasible %v; want a and [a b] as on the cluster without the pod", v.Placement.Node, v.Feasible())
	}
}

// TestCountedPodQuotaFigures: for a counted pod the quota gate leaves the pod's own usage out, so the
// verdict's namespace quota (and the hint that quotes it) must too, or the verdict contradicts itself. p holds
// 4000 MiB, q 2000 MiB, the quota is 5000 MiB (lowered after both started): released, p needs 4000 and 3000
// are left.
func TestCountedPodQuotaFigures(t *testing.T) {
	nodes := []*corev1.Node{mkNode("n1", gpus("n1", 2, 16384))}
	p := placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(4000).GPUCores(0).Obj()), "n1", "n1-g0,NVIDIA,4000,0:;")
	q := placedOn(mkPod("ns", "q", tb.MakeContainer("c").GPUs(1).GPUMem(2000).GPUCores(0).Obj()), "n1", "n1-g1,NVIDIA,2000,0:;")
	c := newTestCluster(nodes, []*corev1.Pod{p, q}, mkQuota("ns", "rq", "limits.nvidia.com/gpumem", "5000"))
	v := c.Evaluate(p, EvalOptions{DetailAll: true})
	if v.Fits {
		t.Fatalf("fits on %s; 4000 MiB with 3000 left must not", v.Placement.Node)
	}
	gate := v.NodeStatus("n1").GPUs[0].Result
	if gate.Code != ResourceQuotaNotFit || gate.Need != 4000 || gate.Have != 3000 {
		t.Fatalf("gate %+v, want ResourceQuotaNotFit need 4000 have 3000", gate)
	}
	if v.Quota.Memory == nil || v.Quota.Memory.Used != 2000 || v.Quota.Memory.Free() != 3000 {
		t.Errorf("verdict quota %+v; the gate says 3000 of 5000 left (2000 used without the pod)", v.Quota.Memory)
	}
	for _, h := range v.Hints {
		if strings.HasPrefix(h, "namespace ") && !strings.Contains(h, "has 3000 MiB") {
			t.Errorf("hint %q contradicts the gate's 3000 MiB left", h)
		}
	}
}
