package engine

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// placedUUIDs lists the GPUs of every container of the verdict's placement, in placement order.
func placedUUIDs(t *testing.T, v *Verdict) []string {
	t.Helper()
	if !v.Fits || v.Placement == nil {
		t.Fatalf("pod does not fit: %s %v", v.Summary, v.Explanation)
	}
	var out []string
	for _, c := range v.Placement.Containers {
		for _, d := range c.Devices {
			out = append(out, d.UUID)
		}
	}
	return out
}

// busy is a pod already placed on one GPU with the given share.
func busy(name, node, uuid string, memMiB, cores int64) *corev1.Pod {
	return placedOn(mkPod("other", name, tb.MakeContainer("c").GPUs(1).GPUMem(memMiB).GPUCores(cores).Obj()), node,
		uuid+",NVIDIA,"+itoa(int(memMiB))+","+itoa(int(cores))+":;")
}

// TestGPUOrderPolicy checks which GPU of a node each GPU policy tries first.
func TestGPUOrderPolicy(t *testing.T) {
	twoGPUs := []*corev1.Node{mkNode("n1", gpus("n1", 2, 16384))}
	g1Used := []*corev1.Pod{busy("b", "n1", "n1-g1", 4096, 20)}
	bothUsed := []*corev1.Pod{busy("b0", "n1", "n1-g0", 4096, 20), busy("b1", "n1", "n1-g1", 4096, 20)}
	// UUIDs sort against the registration order: ties must follow the registration, not the UUID.
	reversed := []codec.DeviceInfo{dev("gpu-z", 0, 16384), dev("gpu-a", 1, 16384)}
	// Registered index 1 first, then index 0: ties follow the registration, not the index.
	regOrder := []codec.DeviceInfo{dev("gpu-b", 1, 16384), dev("gpu-a", 0, 16384)}
	// GPU index 0 sits on NUMA 1, index 1 on NUMA 0: HAMi's Less puts the lower NUMA node first in its list
	// and walks from the end, so ties go to the higher NUMA node.
	numaTie := []codec.DeviceInfo{dev("gpu-0", 0, 16384), dev("gpu-1", 1, 16384)}
	numaTie[0].Numa = 1
	threeGPUs := []*corev1.Node{mkNode("n1", gpus("n1", 3, 16384))}
	cases := []struct {
		name   string
		nodes  []*corev1.Node
		pods   []*corev1.Pod
		policy string // hami.io/gpu-scheduler-policy; "" leaves the annotation out
		count  int64
		want   []string
	}{
		{"binpack takes the used GPU", twoGPUs, g1Used, "binpack", 1, []string{"n1-g1"}},
		{"spread takes the empty GPU", twoGPUs, g1Used, "spread", 1, []string{"n1-g0"}},
		{"default is spread", twoGPUs, g1Used, "", 1, []string{"n1-g0"}},
		{"policy is case-insensitive", twoGPUs, g1Used, "BinPack", 1, []string{"n1-g1"}},
		// HAMi's sort is stable for up to 12 GPUs and Fit walks from the end: ties go to the last-registered GPU.
		{"binpack tie on empty GPUs goes to the last registered", twoGPUs, nil, "binpack", 1, []string{"n1-g1"}},
		{"spread tie on empty GPUs goes to the last registered", twoGPUs, nil, "spread", 1, []string{"n1-g1"}},
		{"binpack tie on equally used GPUs goes to the last registered", twoGPUs, bothUsed, "binpack", 1, []string{"n1-g1"}},
		{"spread tie on equally used GPUs goes to the last registered", twoGPUs, bothUsed, "spread", 1, []string{"n1-g1"}},
		{"tie follows the registration, not the UUID", []*corev1.Node{mkNode("n1", reversed)}, nil, "spread", 1, []string{"gpu-a"}},
		{"tie follows the registration, not the index", []*corev1.Node{mkNode("n1", regOrder)}, nil, "spread", 1, []string{"gpu-a"}},
		{"tie goes to the higher NUMA node first", []*corev1.Node{mkNode("n1", numaTie)}, nil, "binpack", 1, []string{"gpu-0"}},
		{"spread: four idle equal GPUs, one GPU goes to GPU 3", []*corev1.Node{mkNode("n1", gpus("n1", 4, 16384))}, nil, "spread", 1, []string{"n1-g3"}},
		{"mutex takes an unused GPU", twoGPUs, g1Used, "mutex", 1, []string{"n1-g0"}},
		{"mutex skips a used GPU 0", twoGPUs, []*corev1.Pod{busy("b", "n1", "n1-g0", 4096, 20)}, "mutex", 1, []string{"n1-g1"}},
		{"mutex beats binpack in a chain", twoGPUs, g1Used, "binpack,mutex", 1, []string{"n1-g0"}},
		{"mutex skips every used GPU", threeGPUs,
			[]*corev1.Pod{busy("b0", "n1", "n1-g0", 100, 0), busy("b1", "n1", "n1-g1", 100, 0)}, "mutex", 1, []string{"n1-g2"}},
		{"binpack with two GPUs starts at the fullest", threeGPUs,
			[]*corev1.Pod{busy("b1", "n1", "n1-g1", 2048, 0), busy("b2", "n1", "n1-g2", 8192, 0)}, "binpack", 2, []string{"n1-g2", "n1-g1"}},
		{"spread with two GPUs starts at the emptiest", threeGPUs,
			[]*corev1.Pod{busy("b0", "n1", "n1-g0", 8192, 0), busy("b2", "n1", "n1-g2", 2048, 0)}, "spread", 2, []string{"n1-g1", "n1-g2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster(tc.nodes, tc.pods)
			pod := mkPod("ns", "p", tb.MakeContainer("c").GPUs(tc.count).GPUMem(1000).GPUCores(10).Obj())
			if tc.policy != "" {
				withAnno(pod, AnnoGPUPolicy, tc.policy)
			}
			v := c.Evaluate(pod, EvalOptions{})
			if got := placedUUIDs(t, v); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("GPUs %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNodePolicy checks which node each node policy picks and the order of Verdict.Feasible.
func TestNodePolicy(t *testing.T) {
	nodes := []*corev1.Node{
		mkNode("a", gpus("a", 2, 16384)),
		mkNode("b", gpus("b", 2, 16384)),
		mkNode("c", gpus("c", 2, 16384)),
	}
	// b is a little used, c a lot, a not at all.
	fill := []*corev1.Pod{
		busy("b0", "b", "b-g0", 2048, 10),
		busy("c0", "c", "c-g0", 8192, 40),
		busy("c1", "c", "c-g1", 8192, 40),
	}
	// b and c carry the same usage on different GPUs: their scores tie.
	tie := []*corev1.Pod{busy("b0", "b", "b-g1", 4096, 20), busy("c0", "c", "c-g0", 4096, 20)}
	cases := []struct {
		name     string
		pods     []*corev1.Pod
		policy   string // hami.io/node-scheduler-policy; "" leaves it out
		want     string
		feasible []string
	}{
		{"binpack takes the fullest node", fill, "binpack", "c", []string{"c", "b", "a"}},
		{"default is binpack", fill, "", "c", []string{"c", "b", "a"}},
		{"spread takes the emptiest node", fill, "spread", "a", []string{"a", "b", "c"}},
		{"spread is case-insensitive", fill, " Spread ", "a", []string{"a", "b", "c"}},
		{"binpack tie of empty nodes goes to the first name", nil, "binpack", "a", []string{"a", "b", "c"}},
		{"spread tie of empty nodes goes to the first name", nil, "spread", "a", []string{"a", "b", "c"}},
		{"binpack tie of used nodes goes to the first name", tie, "binpack", "b", []string{"b", "c", "a"}},
		{"spread keeps tied used nodes in name order", tie, "spread", "a", []string{"a", "b", "c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster(nodes, tc.pods)
			pod := mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(10).Obj())
			if tc.policy != "" {
				withAnno(pod, AnnoNodePolicy, tc.policy)
			}
			v := c.Evaluate(pod, EvalOptions{})
			if !v.Fits {
				t.Fatalf("does not fit: %s", v.Summary)
			}
			if v.Placement.Node != tc.want {
				t.Errorf("node %s, want %s", v.Placement.Node, tc.want)
			}
			if !reflect.DeepEqual(v.Feasible(), tc.feasible) {
				t.Errorf("feasible %v, want %v", v.Feasible(), tc.feasible)
			}
			if want := NodeScore(c.Node(tc.want)); v.Placement.Score != want || v.NodeStatus(tc.want).Score != want {
				t.Errorf("placement score %v, node score %v, want NodeScore %v", v.Placement.Score, v.NodeStatus(tc.want).Score, want)
			}
		})
	}
	// A node that does not fit is left out of Feasible whatever its score.
	t.Run("full node is not feasible", func(t *testing.T) {
		c := newTestCluster(nodes, fill)
		v := c.Evaluate(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(9000).GPUCores(10).Obj()), EvalOptions{})
		if !reflect.DeepEqual(v.Feasible(), []string{"b", "a"}) || v.Placement.Node != "b" {
			t.Errorf("feasible %v node %s, want [b a] and b", v.Feasible(), v.Placement.Node)
		}
	})
}

// TestNodeScoreNumbers checks NodeScore's exact value: fill ratios summed over the whole node, not averaged
// over GPUs. The numbers are exact binary fractions, so the floats compare with ==.
func TestNodeScoreNumbers(t *testing.T) {
	mixed := []codec.DeviceInfo{
		{ID: "g0", Index: 0, Count: 12, Devmem: 24576, Devcore: 100, Type: "NVIDIA-A10", Health: true},
		{ID: "g1", Index: 1, Count: 4, Devmem: 8192, Devcore: 100, Type: "NVIDIA-A10", Health: true},
	}
	scaled := []codec.DeviceInfo{
		{ID: "g0", Index: 0, Count: 8, Devmem: 16384, Devcore: 200, Type: "NVIDIA-A10", Health: true},
	}
	place := func(name, devices string) *corev1.Pod {
		return placedOn(mkPod("ns", name, tb.MakeContainer("c").GPUs(1).GPUMem(1).GPUCores(1).Obj()), "n1", devices)
	}
	cases := []struct {
		name string
		devs []codec.DeviceInfo
		pods []*corev1.Pod
		want float64
	}{
		{"empty node", mixed, nil, 0},
		// g1 is full (4/4 slots, 8192/8192 MiB, 100/100 %): node 4/16 slots, 8192/32768 MiB, 100/200 % = 10 x 1.
		// A per-GPU average would say 15.
		{"one full small GPU", mixed, []*corev1.Pod{
			place("a", "g1,NVIDIA,2048,25:;"), place("b", "g1,NVIDIA,2048,25:;"),
			place("c", "g1,NVIDIA,2048,25:;"), place("d", "g1,NVIDIA,2048,25:;")}, 10},
		// 2/16 slots, 4096/32768 MiB, 25/200 % = 10 x 0.375.
		{"spread over both GPUs", mixed, []*corev1.Pod{
			place("a", "g0,NVIDIA,1024,0:;"), place("b", "g1,NVIDIA,3072,25:;")}, 3.75},
		// One pod holding two GPUs counts a slot on each.
		{"one pod on two GPUs", mixed, []*corev1.Pod{
			place("a", "g0,NVIDIA,2048,25:g1,NVIDIA,2048,25:;")}, 10 * (2.0/16 + 4096.0/32768 + 50.0/200)},
		// Core scaling: devcore 200 halves the core ratio. 4/8 slots, 8192/16384 MiB, 100/200 % = 10 x 1.5.
		{"core scaling", scaled, []*corev1.Pod{
			place("a", "g0,NVIDIA,4096,50:;"), place("b", "g0,NVIDIA,4096,50:;"),
			place("c", "g0,NVIDIA,0,0:;"), place("d", "g0,NVIDIA,0,0:;")}, 15},
		// A full node scores 30.
		{"full node", scaled[:1], []*corev1.Pod{
			place("a", "g0,NVIDIA,16384,200:;"), place("b", "g0,NVIDIA,0,0:;"), place("c", "g0,NVIDIA,0,0:;"),
			place("d", "g0,NVIDIA,0,0:;"), place("e", "g0,NVIDIA,0,0:;"), place("f", "g0,NVIDIA,0,0:;"),
			place("g", "g0,NVIDIA,0,0:;"), place("h", "g0,NVIDIA,0,0:;")}, 30},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster([]*corev1.Node{mkNode("n1", tc.devs)}, tc.pods)
			if got := NodeScore(c.Node("n1")); got != tc.want {
				t.Errorf("NodeScore = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("node without GPUs", func(t *testing.T) {
		c := newTestCluster([]*corev1.Node{mkNode("n1", nil)}, nil)
		if got := NodeScore(c.Node("n1")); got != 0 {
			t.Errorf("NodeScore = %v, want 0", got)
		}
	})
	t.Run("verdict reports the score", func(t *testing.T) {
		c := newTestCluster([]*corev1.Node{mkNode("n1", mixed)}, []*corev1.Pod{
			place("a", "g0,NVIDIA,1024,0:;"), place("b", "g1,NVIDIA,3072,25:;")})
		v := c.Evaluate(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(10).Obj()), EvalOptions{})
		if !v.Fits || v.Placement.Score != 3.75 || v.NodeStatus("n1").Score != 3.75 {
			t.Fatalf("fits %v, scores %+v", v.Fits, v.Nodes())
		}
		if !strings.Contains(v.Summary, "score 3.75") {
			t.Errorf("summary %q does not show score 3.75", v.Summary)
		}
	})
}

// TestDeviceScoringWeights builds a node where g0 is fuller in slots and g1 fuller in memory: the weights
// decide which GPU is "fuller".
func TestDeviceScoringWeights(t *testing.T) {
	// g0: 3 of 10 slots, 300 of 16384 MiB. g1: 1 of 10 slots, 8192 of 16384 MiB. No cores used.
	pods := []*corev1.Pod{
		busy("s0", "n1", "n1-g0", 100, 0), busy("s1", "n1", "n1-g0", 100, 0), busy("s2", "n1", "n1-g0", 100, 0),
		busy("m0", "n1", "n1-g1", 8192, 0),
	}
	cases := []struct {
		name    string
		policy  string
		weights string // "" leaves the annotation out
		want    string
	}{
		// Default weights: g0 = 10 x (0.3 + 0.018), g1 = 10 x (0.1 + 0.5): g1 is fuller.
		{"binpack default weights", "binpack", "", "n1-g1"},
		{"spread default weights", "spread", "", "n1-g0"},
		// Slots weigh 10: g0 = 10 x (3 + 0.018), g1 = 10 x (1 + 0.5): g0 is fuller.
		{"binpack slot-heavy", "binpack", "slot=10,memory=1", "n1-g0"},
		{"spread slot-heavy", "spread", "slot=10,memory=1", "n1-g1"},
		// Memory off: only slots count.
		{"binpack memory off", "binpack", "memory=0", "n1-g0"},
		{"binpack memory-heavy", "binpack", "slot=1,core=1,memory=3", "n1-g1"},
		{"spaces and aliases", "binpack", " slots = 10 , mem = 1 ", "n1-g0"},
		// All weights zero: every GPU scores 0 and the tie goes to the last-registered GPU.
		{"all zero ties to the last registered", "binpack", "slot=0,core=0,memory=0", "n1-g1"},
		// A malformed value is reported and the defaults apply.
		{"malformed falls back to defaults", "binpack", "slot=ten", "n1-g1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 2, 16384))}, pods)
			pod := withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(10).Obj()), AnnoGPUPolicy, tc.policy)
			if tc.weights != "" {
				withAnno(pod, AnnoDeviceScoreWeight, tc.weights)
			}
			v := c.Evaluate(pod, EvalOptions{})
			if got := placedUUIDs(t, v); len(got) != 1 || got[0] != tc.want {
				t.Errorf("GPUs %v, want [%s]", got, tc.want)
			}
			malformed := strings.HasPrefix(tc.name, "malformed")
			if hasProblem := len(v.Problems) > 0; hasProblem != malformed {
				t.Errorf("problems %v, want some: %v", v.Problems, malformed)
			}
		})
	}
}

// pairScores builds a symmetric hami.io/node-nvidia-score value from "a-b" keys.
func pairScores(scores map[string]int) string {
	m := map[string]map[string]int{}
	var order []string
	for k, s := range scores {
		a, b, _ := strings.Cut(k, "-")
		for _, x := range [][2]string{{a, b}, {b, a}} {
			if m[x[0]] == nil {
				m[x[0]] = map[string]int{}
				order = append(order, x[0])
			}
			m[x[0]][x[1]] = s
		}
	}
	var ps []codec.PairScore
	for _, u := range order {
		ps = append(ps, codec.PairScore{UUID: u, Scores: m[u]})
	}
	return codec.FormatPairScores(ps)
}

// TestTopologyAware checks that a multi-GPU request takes the best-linked set and a single GPU the
// worst-connected one.
func TestTopologyAware(t *testing.T) {
	devs := []codec.DeviceInfo{dev("a", 0, 16384), dev("b", 1, 16384), dev("c", 2, 16384), dev("d", 3, 16384)}
	// Pair sums: a 150, b 260, c 70, d 260. Best pair b-d (200); worst-connected c.
	scores := pairScores(map[string]int{"a-b": 50, "a-c": 50, "a-d": 60, "b-c": 10, "b-d": 200, "c-d": 10})
	node := mkNode("n1", devs, codec.NodePairScoreAnnotation, scores)
	cases := []struct {
		name   string
		node   *corev1.Node
		pods   []*corev1.Pod
		policy string
		count  int64
		want   []string
	}{
		{"two GPUs take the best pair", node, nil, "topology-aware", 2, []string{"b", "d"}},
		{"one GPU takes the worst-connected", node, nil, "topology-aware", 1, []string{"c"}},
		// Without topology-aware the spread order decides: equal GPUs, walked from the end: d, then c.
		{"spread ignores links", node, nil, "spread", 2, []string{"c", "d"}},
		{"chain with binpack", node, nil, "binpack,topology-aware", 2, []string{"b", "d"}},
		// b has no free slot: the best pair among a, c, d is a-d (60).
		{"best pair among the GPUs that fit", node, []*corev1.Pod{
			placedOn(mkPod("other", "x", tb.MakeContainer("c").GPUs(1).GPUMem(16384).Obj()), "n1", "b,NVIDIA,16384,0:;")},
			"topology-aware", 2, []string{"a", "d"}},
		// c has no room: among a, b, d the sums are a 110, b 250, d 260: a is worst-connected.
		{"worst-connected among the GPUs that fit", node, []*corev1.Pod{
			placedOn(mkPod("other", "x", tb.MakeContainer("c").GPUs(1).GPUMem(16384).Obj()), "n1", "c,NVIDIA,16384,0:;")},
			"topology-aware", 1, []string{"a"}},
		// Three GPUs: b-d plus the third with the highest links to both: a (50 + 60) beats c (10 + 10).
		{"three GPUs", node, nil, "topology-aware", 3, []string{"a", "b", "d"}},
		// Without the annotation every pair scores 0: the walk order decides (d, c).
		{"no scores keeps the policy order", mkNode("n1", devs), nil, "topology-aware", 2, []string{"c", "d"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster([]*corev1.Node{tc.node}, tc.pods)
			pod := withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(tc.count).GPUMem(1000).GPUCores(10).Obj()), AnnoGPUPolicy, tc.policy)
			v := c.Evaluate(pod, EvalOptions{})
			got := placedUUIDs(t, v)
			if !reflect.DeepEqual(sortedCopy(got), tc.want) {
				t.Errorf("GPUs %v, want %v", got, tc.want)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestNumaBind checks that a numa-bound container takes all its GPUs from one NUMA node.
func TestNumaBind(t *testing.T) {
	devs := gpus("n1", 4, 16384)
	devs[0].Numa, devs[1].Numa, devs[2].Numa, devs[3].Numa = 0, 0, 1, 1
	node := mkNode("n1", devs)
	// g1 (NUMA 0) has no memory left: NUMA 0 has one free GPU, NUMA 1 has two.
	full := []*corev1.Pod{placedOn(mkPod("other", "x", tb.MakeContainer("c").GPUs(1).GPUMem(16384).Obj()), "n1", "n1-g1,NVIDIA,16384,0:;")}
	cases := []struct {
		name  string
		annos []string
		count int64
		want  []string
	}{
		{"numa-bind true", []string{AnnoNumaBind, "true"}, 2, []string{"n1-g2", "n1-g3"}},
		// "numa" alone is a sort key (lower NUMA node first in HAMi's list, so walked last), not a binding.
		{"numa policy", []string{AnnoGPUPolicy, "numa"}, 2, []string{"n1-g2", "n1-g3"}},
		{"numa policy does not bind", []string{AnnoGPUPolicy, "numa"}, 3, []string{"n1-g0", "n1-g2", "n1-g3"}},
		{"numa-bind with binpack", []string{AnnoNumaBind, "true", AnnoGPUPolicy, "binpack"}, 2, []string{"n1-g2", "n1-g3"}},
		// Without binding: score first (g1 is fullest), ties by NUMA node, walked from the end: g3, g2.
		{"no numa-bind", nil, 2, []string{"n1-g2", "n1-g3"}},
		{"numa-bind false", []string{AnnoNumaBind, "false"}, 2, []string{"n1-g2", "n1-g3"}},
		// Spread with numa-bind walks the higher NUMA node first.
		{"one GPU takes the higher NUMA node with spread", []string{AnnoNumaBind, "true"}, 1, []string{"n1-g3"}},
		// Binpack with numa-bind walks the lower NUMA node first: g1 is full, g0 fits.
		{"one GPU takes the lower NUMA node with binpack", []string{AnnoNumaBind, "true", AnnoGPUPolicy, "binpack"}, 1, []string{"n1-g0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster([]*corev1.Node{node}, full)
			pod := withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(tc.count).GPUMem(1000).GPUCores(10).Obj()), tc.annos...)
			v := c.Evaluate(pod, EvalOptions{DetailAll: true})
			if got := placedUUIDs(t, v); !reflect.DeepEqual(sortedCopy(got), tc.want) {
				t.Errorf("GPUs %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("three GPUs fit on no NUMA node", func(t *testing.T) {
		c := newTestCluster([]*corev1.Node{node}, full)
		v := c.Evaluate(withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(3).GPUMem(1000).GPUCores(10).Obj()), AnnoNumaBind, "true"), EvalOptions{})
		if v.Fits {
			t.Fatalf("fits on %v; NUMA 1 has only two GPUs", placedUUIDs(t, v))
		}
		// Walked g3, g2 (NUMA 1: two found, dropped), g0 (NUMA 0), g1 (full).
		if ns := v.NodeStatus("n1"); ns.Reason != "1/4 AllocatedCardsInsufficientRequest, 1/4 CardInsufficientMemory, 2/4 NumaNotFit" {
			t.Errorf("reason %q", ns.Reason)
		}
	})
}
