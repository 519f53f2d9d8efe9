package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// placeByHand places copies of pod one at a time with Evaluate and bind's annotations, up to limit, and
// returns how many fit and how many landed on each node (sorted by node name).
func placeByHand(t *testing.T, c *Cluster, pod *corev1.Pod, limit int) (int, []NodeCopies) {
	t.Helper()
	perNode := map[string]int{}
	n := 0
	for ; n < limit; n++ {
		cp := pod.DeepCopy()
		cp.Name = fmt.Sprintf("%s-copy-%d", pod.Name, n)
		v := c.Evaluate(cp, EvalOptions{})
		if !v.Fits {
			break
		}
		if probs := c.SetPod(bindPod(cp, v.Placement, time.Unix(1_800_000_000, 0))); len(probs) > 0 {
			t.Fatalf("copy %d: bound pod reports %v", n, probs)
		}
		perNode[v.Placement.Node]++
	}
	var nodes []NodeCopies
	for name, k := range perNode {
		nodes = append(nodes, NodeCopies{Node: name, Copies: k})
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Node < nodes[j].Node })
	return n, nodes
}

// capacityScenario builds the same cluster twice: one for Capacity, one to place copies by hand.
type capacityScenario struct {
	name   string
	nodes  []*corev1.Node
	pods   []*corev1.Pod
	quotas []*corev1.ResourceQuota
	pod    *corev1.Pod
	// want is the number of copies that fit (checked against both methods), with its per-node split.
	want      int
	wantNodes []NodeCopies
}

func (s capacityScenario) cluster() *Cluster { return newTestCluster(s.nodes, s.pods, s.quotas...) }

func capacityScenarios() []capacityScenario {
	slotDevs := func(node string, n int, slots int32) []codec.DeviceInfo {
		d := gpus(node, n, 16384)
		for i := range d {
			d[i].Count = slots
		}
		return d
	}
	withInit := mkPod("ns", "init", tb.MakeContainer("main").GPUs(1).GPUMem(2048).GPUCores(10).Obj())
	withInit.Spec.InitContainers = []corev1.Container{tb.MakeContainer("warm").GPUs(2).GPUMem(4096).GPUCores(0).Obj()}
	mig := []codec.DeviceInfo{{ID: "m-g0", Count: 7, Devmem: 81920, Devcore: 100, Type: "NVIDIA-A100", Health: true, Mode: "mig",
		MigProfiles: []codec.MigProfile{
			{Name: "1g.10gb", MemoryMB: 9856, Core: 14, SliceCount: 1, Placements: []codec.MigPlacement{
				{Start: 0, Size: 1}, {Start: 1, Size: 1}, {Start: 2, Size: 1}, {Start: 3, Size: 1}, {Start: 4, Size: 1}, {Start: 5, Size: 1}, {Start: 6, Size: 1}}},
			{Name: "3g.40gb", MemoryMB: 40192, Core: 42, SliceCount: 3, Placements: []codec.MigPlacement{{Start: 0, Size: 4}, {Start: 4, Size: 4}}},
		}}}
	return []capacityScenario{
		{
			// 2 nodes x 2 GPUs x 3 slots, tiny requests: 12 copies, binpack fills n1 first.
			name:  "slots-limited",
			nodes: []*corev1.Node{mkNode("n1", slotDevs("n1", 2, 3)), mkNode("n2", slotDevs("n2", 2, 3))},
			pod:   mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(100).GPUCores(0).Obj()),
			want:  12, wantNodes: []NodeCopies{{"n1", 6}, {"n2", 6}},
		},
		{
			// 5000 MiB per copy: 3 per 16 GiB GPU, 2 per 12 GiB GPU; 10 slots never bind.
			name: "memory-limited",
			nodes: []*corev1.Node{mkNode("a", gpus("a", 2, 16384)), mkNode("b", gpus("b", 1, 12288)),
				mkNode("c", gpus("c", 1, 4096))},
			pod:  mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(5000).GPUCores(0).Obj()),
			want: 8, wantNodes: []NodeCopies{{"a", 6}, {"b", 2}},
		},
		{
			// Existing usage and a quota of 20000 MiB with 4000 already used: 4 copies of 4000 MiB.
			name:   "quota-limited",
			nodes:  []*corev1.Node{mkNode("n1", gpus("n1", 2, 81920)), mkNode("n2", gpus("n2", 2, 81920))},
			pods:   []*corev1.Pod{placedOn(mkPod("ns", "old", tb.MakeContainer("c").GPUs(1).GPUMem(4000).Obj()), "n2", "n2-g1,NVIDIA,4000,0:;")},
			quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "20000")},
			pod:    mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(4000).GPUCores(0).Obj()),
			want:   4, wantNodes: []NodeCopies{{"n2", 4}},
		},
		{
			// A quota on cores with two GPUs per copy: 2 x 30 % per copy, 250 % allowed: 4 copies.
			name:   "cores quota, two GPUs per copy",
			nodes:  []*corev1.Node{mkNode("n1", gpus("n1", 4, 81920))},
			quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpucores", "250")},
			pod:    mkPod("ns", "p", tb.MakeContainer("c").GPUs(2).GPUMem(1000).GPUCores(30).Obj()),
			want:   4, wantNodes: []NodeCopies{{"n1", 4}},
		},
		{
			// Spread alternates between nodes; cores bind: 100 % per GPU, 40 % per copy: 2 per GPU.
			name:  "spread, cores-limited",
			nodes: []*corev1.Node{mkNode("n1", gpus("n1", 2, 81920)), mkNode("n2", gpus("n2", 1, 81920))},
			pod:   withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(40).Obj()), AnnoNodePolicy, "spread"),
			want:  6, wantNodes: []NodeCopies{{"n1", 4}, {"n2", 2}},
		},
		{
			// Percent memory: 50 % of each GPU, two GPUs per copy.
			name:  "percent memory, two GPUs",
			nodes: []*corev1.Node{mkNode("n1", gpus("n1", 3, 16384)), mkNode("n2", gpus("n2", 2, 24576))},
			pod:   mkPod("ns", "p", tb.MakeContainer("c").GPUs(2).GPUMemPercent(50).GPUCores(0).Obj()),
			want:  5, wantNodes: []NodeCopies{{"n1", 3}, {"n2", 2}},
		},
		{
			// Init container on two GPUs, app on one: per GPU the pod holds max(app, init).
			name:  "init containers",
			nodes: []*corev1.Node{mkNode("n1", gpus("n1", 2, 16384))},
			pod:   withInit,
			want:  4, wantNodes: []NodeCopies{{"n1", 4}},
		},
		{
			// Whole-GPU requests with the mutex policy: one copy per GPU.
			name:  "mutex",
			nodes: []*corev1.Node{mkNode("n1", gpus("n1", 3, 16384)), mkNode("n2", gpus("n2", 1, 16384))},
			pods:  []*corev1.Pod{placedOn(mkPod("other", "old", tb.MakeContainer("c").GPUs(1).GPUMem(100).Obj()), "n1", "n1-g2,NVIDIA,100,0:;")},
			pod:   withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), AnnoGPUPolicy, "mutex"),
			want:  3, wantNodes: []NodeCopies{{"n1", 2}, {"n2", 1}},
		},
		{
			// MIG: 9000 MiB takes a 1g.10gb slice, 7 of them.
			name:  "mig slices",
			nodes: []*corev1.Node{mkNode("m", mig)},
			pod:   mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(9000).GPUCores(0).Obj()),
			want:  7, wantNodes: []NodeCopies{{"m", 7}},
		},
		{
			name:  "nothing fits",
			nodes: []*corev1.Node{mkNode("n1", gpus("n1", 2, 8192))},
			pod:   mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(10000).GPUCores(0).Obj()),
			want:  0,
		},
	}
}

// TestCapacityMatchesPlacingByHand compares Capacity with copies placed one by one through Evaluate and
// bind's annotations.
func TestCapacityMatchesPlacingByHand(t *testing.T) {
	for _, s := range capacityScenarios() {
		t.Run(s.name, func(t *testing.T) {
			got := s.cluster().Capacity(s.pod, 100)
			n, nodes := placeByHand(t, s.cluster(), s.pod, 100)
			if n != s.want || !reflect.DeepEqual(nodes, s.wantNodes) {
				t.Errorf("by hand %d copies %v, want %d %v", n, nodes, s.want, s.wantNodes)
			}
			if got.Copies != n || !reflect.DeepEqual(got.Nodes, nodes) {
				t.Errorf("Capacity %d copies %v, by hand %d %v", got.Copies, got.Nodes, n, nodes)
			}
			if got.Capped {
				t.Errorf("Capped with %d copies under a limit of 100", got.Copies)
			}
		})
	}
}

// clusterState is everything a Capacity call could touch: GPU usage (MIG placements included), counted
// pods and quotas.
func clusterState(t *testing.T, c *Cluster) string {
	t.Helper()
	type gpuState struct {
		Node, UUID string
		Slots      int32
		Mem, Cores int64
		Mig        []codec.MigPlacement
	}
	var out []any
	for _, name := range c.NodeNames() {
		for _, g := range c.Node(name).GPUs {
			out = append(out, gpuState{name, g.UUID, g.UsedSlots, g.UsedMem, g.UsedCores, g.MigUsed})
		}
		for _, p := range c.PodsOn(name) {
			out = append(out, p)
		}
	}
	for _, ns := range c.QuotaNamespaces() {
		out = append(out, c.Quota(ns))
	}
	return mustJSONString(t, out)
}

// TestCapacityLeavesClusterAlone checks that Capacity changes neither usage nor later verdicts.
func TestCapacityLeavesClusterAlone(t *testing.T) {
	for _, s := range capacityScenarios() {
		t.Run(s.name, func(t *testing.T) {
			c := s.cluster()
			before := clusterState(t, c)
			verdict := mustJSONString(t, c.Evaluate(s.pod, EvalOptions{DetailAll: true}))
			first := c.Capacity(s.pod, 100)
			if after := clusterState(t, c); after != before {
				t.Fatalf("Capacity changed the cluster:\nbefore %s\nafter  %s", before, after)
			}
			if again := mustJSONString(t, c.Evaluate(s.pod, EvalOptions{DetailAll: true})); again != verdict {
				t.Fatalf("verdict changed after Capacity:\nbefore %s\nafter  %s", verdict, again)
			}
			if second := c.Capacity(s.pod, 100); !reflect.DeepEqual(first, second) {
				t.Fatalf("second Capacity %+v, first %+v", second, first)
			}
		})
	}
}

// TestCapacityLimit checks that the limit caps the count and sets Capped.
func TestCapacityLimit(t *testing.T) {
	nodes := []*corev1.Node{mkNode("n1", gpus("n1", 2, 16384)), mkNode("n2", gpus("n2", 2, 16384))}
	pod := mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(4096).GPUCores(0).Obj()) // 4 per GPU: 16 copies in all
	cases := []struct {
		limit  int
		copies int
		capped bool
		nodes  []NodeCopies
	}{
		{0, 0, false, nil},
		{-1, 0, false, nil},
		{1, 1, true, []NodeCopies{{"n1", 1}}},
		{5, 5, true, []NodeCopies{{"n1", 5}}},
		{10, 10, true, []NodeCopies{{"n1", 8}, {"n2", 2}}},
		{15, 15, true, []NodeCopies{{"n1", 8}, {"n2", 7}}},
		{16, 16, true, []NodeCopies{{"n1", 8}, {"n2", 8}}}, // stopped at the limit: Capped even though nothing more fits
		{17, 16, false, []NodeCopies{{"n1", 8}, {"n2", 8}}},
		{1000, 16, false, []NodeCopies{{"n1", 8}, {"n2", 8}}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			got := newTestCluster(nodes, nil).Capacity(pod, tc.limit)
			want := Capacity{Copies: tc.copies, Capped: tc.capped, Nodes: tc.nodes}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Capacity(limit %d) = %+v, want %+v", tc.limit, got, want)
			}
			if tc.limit > 0 {
				if n, byHand := placeByHand(t, newTestCluster(nodes, nil), pod, tc.limit); n != tc.copies || !reflect.DeepEqual(byHand, tc.nodes) {
					t.Errorf("by hand %d %v, want %d %v", n, byHand, tc.copies, tc.nodes)
				}
			}
		})
	}
	t.Run("no GPU request", func(t *testing.T) {
		got := newTestCluster(nodes, nil).Capacity(mkPod("ns", "p", tb.MakeContainer("c").Obj()), 10)
		if !reflect.DeepEqual(got, Capacity{}) {
			t.Errorf("Capacity = %+v, want zero", got)
		}
	})
}

// TestCapacityRandomClusters compares Capacity with placing by hand on random clusters and pods.
func TestCapacityRandomClusters(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	total := 0
	for i := 0; i < 60; i++ {
		w := &propWorld{nodes: randomNodes(rng, 3+rng.IntN(2)), placed: map[string]*corev1.Pod{}}
		if rng.IntN(2) == 0 {
			w.quotas = []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", fmt.Sprint(10000+rng.IntN(40000)))}
		}
		base := w.rebuild(rng)
		for j := 0; j < rng.IntN(6); j++ {
			p := randomPod(rng, []string{"ns", "other"}[rng.IntN(2)], fmt.Sprintf("fill-%d", j))
			if v := base.Evaluate(p, EvalOptions{}); v.Fits {
				placed := bindPod(p, v.Placement, time.Unix(1_800_000_000, 0))
				base.SetPod(placed)
				w.placed[placed.Namespace+"/"+placed.Name] = placed
			}
		}
		pod := randomPod(rng, "ns", "probe")
		limit := 1 + rng.IntN(30)
		c := w.rebuild(rng)
		before := clusterState(t, c)
		got := c.Capacity(pod, limit)
		if after := clusterState(t, c); after != before {
			t.Fatalf("case %d: Capacity changed the cluster", i)
		}
		n, nodes := placeByHand(t, w.rebuild(rng), pod, limit)
		if got.Copies != n || !reflect.DeepEqual(got.Nodes, nodes) || got.Capped != (n == limit) {
			t.Fatalf("case %d: pod %s\nCapacity %+v\nby hand %d %v (limit %d)", i, mustJSONString(t, pod.Spec), got, n, nodes, limit)
		}
		total += n
	}
	if total == 0 {
		t.Fatal("no copy fitted in any random case")
	}
}
