package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// containerUUIDs lists each container's GPUs in the order they were taken.
func containerUUIDs(t *testing.T, v *Verdict) [][]string {
	t.Helper()
	if !v.Fits {
		t.Fatalf("pod does not fit: %s %v", v.Summary, v.Explanation)
	}
	var out [][]string
	for _, c := range v.Placement.Containers {
		var ids []string
		for _, d := range c.Devices {
			ids = append(ids, d.UUID)
		}
		out = append(out, ids)
	}
	return out
}

// TestHAMiOrderExamples are the examples of issue 18, each with HAMi v2.10's answer.
func TestHAMiOrderExamples(t *testing.T) {
	t.Run("the first container's GPU decides whether the second fits", func(t *testing.T) {
		// GPU 0 has 16 GiB, GPU 1 8 GiB, both idle. HAMi takes GPU 1 (last registered) for the 6000 MiB
		// container; the second container's sort puts the now-used GPU 1 first and walks to GPU 0, which holds
		// 12000 MiB. Taking GPU 0 first (the old index-first rule) left no GPU for 12000 MiB.
		devs := []codec.DeviceInfo{dev("g0", 0, 16384), dev("g1", 1, 8192)}
		c := newTestCluster([]*corev1.Node{mkNode("n1", devs)}, nil)
		v := c.Evaluate(mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMem(6000).GPUCores(0).Obj(), tb.MakeContainer("b").GPUs(1).GPUMem(12000).GPUCores(0).Obj()), EvalOptions{})
		if got, want := containerUUIDs(t, v), [][]string{{"g1"}, {"g0"}}; !reflect.DeepEqual(got, want) {
			t.Errorf("GPUs %v, want %v", got, want)
		}
	})
	t.Run("two mutex containers each take an idle GPU, the last registered first", func(t *testing.T) {
		c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 2, 16384))}, nil)
		pod := withAnno(mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMem(1000).GPUCores(0).Obj(), tb.MakeContainer("b").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), AnnoGPUPolicy, "mutex")
		v := c.Evaluate(pod, EvalOptions{})
		if got, want := containerUUIDs(t, v), [][]string{{"n1-g1"}, {"n1-g0"}}; !reflect.DeepEqual(got, want) {
			t.Errorf("GPUs %v, want %v", got, want)
		}
	})
	t.Run("a first container failing on memory decides the reason, not a later container's count", func(t *testing.T) {
		c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 2, 16384))}, nil)
		v := c.Evaluate(mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMem(20000).GPUCores(0).Obj(), tb.MakeContainer("b").GPUs(4).GPUMem(1000).GPUCores(0).Obj()), EvalOptions{})
		ns := v.NodeStatus("n1")
		if v.Fits || ns.Code != CardInsufficientMemory || ns.Reason != "2/2 CardInsufficientMemory" || ns.Container != "a" {
			t.Errorf("fits %v, code %s, reason %q, container %q; want 2/2 CardInsufficientMemory on a", v.Fits, ns.Code, ns.Reason, ns.Container)
		}
		// The same count failure on the first container is still NodeInsufficientDevice.
		v = c.Evaluate(mkPod("ns", "p", tb.MakeContainer("a").GPUs(4).GPUMem(1000).GPUCores(0).Obj(), tb.MakeContainer("b").GPUs(1).GPUMem(20000).GPUCores(0).Obj()), EvalOptions{})
		if ns := v.NodeStatus("n1"); ns.Code != NodeInsufficientDevice || ns.Check == nil || ns.Check.Need != 4 || ns.Check.Have != 2 {
			t.Errorf("code %s check %+v; want NodeInsufficientDevice 4 > 2", ns.Code, ns.Check)
		}
	})
	t.Run("topology-aware with numa-bind keeps only the last NUMA node walked", func(t *testing.T) {
		// Found by running HAMi's own Fit beside the engine (seed 216337): GPU g0 (NUMA 1, idle, 24 GiB) is
		// walked first and fits; g1 (NUMA 0, 8 of 16 GiB used) restarts the set and does not fit. HAMi's
		// topology walk never stops early, so g0 is dropped and the pod waits.
		devs := []codec.DeviceInfo{dev("g0", 0, 24576), dev("g1", 1, 16384)}
		devs[0].Numa = 1
		c := newTestCluster([]*corev1.Node{mkNode("n1", devs)},
			[]*corev1.Pod{placedOn(mkPod("ns", "used", tb.MakeContainer("a").GPUs(1).GPUMem(8192).GPUCores(0).Obj()), "n1", "g1,NVIDIA,8192,0:;")})
		pod := withAnno(mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMem(12000).GPUCores(0).Obj()), AnnoNumaBind, "true", AnnoGPUPolicy, "spread,topology-aware")
		v := c.Evaluate(pod, EvalOptions{})
		if v.Fits {
			t.Fatalf("fits on %v; HAMi leaves the pod pending", containerUUIDs(t, v))
		}
		if ns := v.NodeStatus("n1"); !strings.Contains(ns.Reason, "CardInsufficientMemory") {
			t.Errorf("reason %q, want CardInsufficientMemory among the GPU reasons", ns.Reason)
		}
	})
	t.Run("topology-aware with numa-bind counts no NumaNotFit for the dropped NUMA node", func(t *testing.T) {
		// HAMi's topology walk never moves k.Nums, so its NumaNotFit (counted only when k.Nums moved,
		// pkg/device/nvidia/device.go:746-748) is never said: the first NUMA node's two GPUs are dropped
		// silently and the last one's two are short.
		devs := gpus("n1", 4, 16384)
		devs[2].Numa, devs[3].Numa = 1, 1
		c := newTestCluster([]*corev1.Node{mkNode("n1", devs)}, nil)
		pod := withAnno(mkPod("ns", "p", tb.MakeContainer("a").GPUs(3).GPUMem(1000).GPUCores(0).Obj()), AnnoNumaBind, "true", AnnoGPUPolicy, "spread,topology-aware")
		v := c.Evaluate(pod, EvalOptions{})
		if ns := v.NodeStatus("n1"); v.Fits || ns.Reason != "2/4 AllocatedCardsInsufficientRequest" {
			t.Errorf("fits %v, reason %q; want HAMi's 2/4 AllocatedCardsInsufficientRequest, no NumaNotFit", v.Fits, ns.Reason)
		}
	})
	t.Run("an unhealthy GPU on another NUMA node does not restart the set", func(t *testing.T) {
		// Walk with numa-bind and spread: g2, g1 (NUMA 1), then the unhealthy g0 (NUMA 0). HAMi checks health
		// before the NUMA set, so the set of two is kept and reported short, not dropped as NumaNotFit.
		devs := gpus("n1", 3, 16384)
		devs[0].Health = false
		devs[1].Numa, devs[2].Numa = 1, 1
		c := newTestCluster([]*corev1.Node{mkNode("n1", devs)}, nil)
		v := c.Evaluate(withAnno(mkPod("ns", "p", tb.MakeContainer("a").GPUs(3).GPUMem(1000).GPUCores(0).Obj()), AnnoNumaBind, "true"), EvalOptions{})
		if ns := v.NodeStatus("n1"); v.Fits || ns.Reason != "1/3 CardNotHealth, 2/3 AllocatedCardsInsufficientRequest" {
			t.Errorf("fits %v, reason %q", v.Fits, ns.Reason)
		}
	})
	t.Run("a cordoned GPU between NUMA nodes does not restart the set", func(t *testing.T) {
		devs := gpus("n1", 3, 16384)
		devs[1].Numa, devs[2].Numa = 1, 1
		node := mkNode("n1", devs, codec.NodeCordonAnnotation, "n1-g0")
		c := newTestCluster([]*corev1.Node{node}, nil)
		v := c.Evaluate(withAnno(mkPod("ns", "p", tb.MakeContainer("a").GPUs(3).GPUMem(1000).GPUCores(0).Obj()), AnnoNumaBind, "true"), EvalOptions{})
		if ns := v.NodeStatus("n1"); v.Fits || ns.Reason != "1/3 CardCordoned, 2/3 AllocatedCardsInsufficientRequest" {
			t.Errorf("fits %v, reason %q", v.Fits, ns.Reason)
		}
	})
}

// TestHandshakeAsHAMiRegisters checks a node whose allocatable GPU count is 0 against HAMi v2.10.0's
// registration pass (CheckHealth, pkg/device/devices.go:576-613, pkg/device/nvidia/device.go:234-257): only a
// Requesting_ stamp at least 60 s old drops the node; any other handshake is stamped Requesting_<now> and the
// node keeps its GPUs, so HAMi judges them.
func TestHandshakeAsHAMiRegisters(t *testing.T) {
	now := time.Date(2026, 11, 24, 3, 0, 0, 0, time.Local)
	stamp := func(d time.Duration) string { return codec.FormatHandshakeRequesting(now.Add(-d)) }
	cases := []struct {
		name, handshake string
		alloc           int64
		clock           bool
		ready           bool
		detail          string // part of the NodeDevicesNotReady detail
	}{
		{name: "no handshake: HAMi stamps it now", clock: true, ready: true},
		{name: "old Reported handshake", handshake: "Reported 2026-11-24 02:00:00", clock: true, ready: true},
		{name: "Deleted handshake", handshake: "Deleted_2026-11-24 02:00:00", clock: true, ready: true},
		{name: "Requesting without a readable time", handshake: "Requesting_yesterday", clock: true, ready: true},
		{name: "Requesting 30 s ago", handshake: stamp(30 * time.Second), clock: true, ready: true},
		{name: "Requesting 59 s ago", handshake: stamp(59 * time.Second), clock: true, ready: true},
		{name: "Requesting 60 s ago", handshake: stamp(60 * time.Second), clock: true,
			detail: "handshake " + stamp(60*time.Second) + " is 60 s old or more (HAMi's grace)"},
		{name: "Requesting an hour ago", handshake: stamp(time.Hour), clock: true, detail: "so HAMi drops the node"},
		{name: "Requesting, no evaluation time", handshake: stamp(30 * time.Second), detail: "the device plugin is not serving GPUs"},
		{name: "an old stamp with GPUs allocatable", handshake: stamp(time.Hour), alloc: 1, clock: true, ready: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := mkNode("n1", gpus("n1", 1, 16384))
			n.Status.Allocatable["nvidia.com/gpu"] = *resource.NewQuantity(tc.alloc, resource.DecimalSI)
			if tc.handshake != "" {
				n.Annotations[codec.NodeHandshakeAnnotation] = tc.handshake
			}
			c := newTestCluster([]*corev1.Node{n}, nil)
			opts := EvalOptions{}
			if tc.clock {
				opts.Now = now
			}
			v := c.Evaluate(mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), opts)
			ns := v.NodeStatus("n1")
			if tc.ready {
				if !v.Fits || ns.Code != "" {
					t.Fatalf("fits %v, code %s (%s): HAMi judges this node's GPUs", v.Fits, ns.Code, v.Summary)
				}
				return
			}
			if v.Fits || ns.Code != NodeDevicesNotReady || ns.Check == nil {
				t.Fatalf("fits %v, code %s, want NodeDevicesNotReady", v.Fits, ns.Code)
			}
			if !strings.Contains(ns.Check.Detail, tc.detail) {
				t.Errorf("detail %q, want it to say %q", ns.Check.Detail, tc.detail)
			}
		})
	}
}

// TestWebhookRefusal checks HAMi's admission-time quota check with its numbers.
func TestWebhookRefusal(t *testing.T) {
	nodes := []*corev1.Node{mkNode("n1", gpus("n1", 2, 16384))}
	used := []*corev1.Pod{placedOn(mkPod("ns", "x", tb.MakeContainer("c").GPUs(1).GPUMem(3000).GPUCores(30).Obj()), "n1", "n1-g0,NVIDIA,3000,30:;")}
	quota := mkQuota("ns", "gpu", "limits.nvidia.com/gpumem", "4000", "limits.nvidia.com/gpucores", "100")
	cases := []struct {
		name string
		pod  *corev1.Pod
		want string // "" for admitted
	}{
		{"fits the quota", mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMem(1000).GPUCores(10).Obj()), ""},
		{"memory over the quota", mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMem(2000).GPUCores(10).Obj()),
			"exceeding resource quota: limits.nvidia.com/gpumem in ResourceQuota gpu: 3000 MiB used + 2000 MiB asked > 4000 MiB limit"},
		{"per GPU times the count", mkPod("ns", "p", tb.MakeContainer("a").GPUs(2).GPUMem(600).GPUCores(10).Obj()),
			"exceeding resource quota: limits.nvidia.com/gpumem in ResourceQuota gpu: 3000 MiB used + 1200 MiB asked > 4000 MiB limit"},
		{"cores over the quota", mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMem(500).GPUCores(80).Obj()),
			"exceeding resource quota: limits.nvidia.com/gpucores in ResourceQuota gpu: 30 % used + 80 % asked > 100 % limit"},
		{"init containers count as their largest", func() *corev1.Pod {
			p := mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMem(500).GPUCores(10).Obj())
			p.Spec.InitContainers = []corev1.Container{tb.MakeContainer("i1").GPUs(1).GPUMem(900).GPUCores(0).Obj(), tb.MakeContainer("i2").GPUs(1).GPUMem(700).GPUCores(0).Obj()}
			return p
		}(), ""},
		{"a percentage counts nothing at admission", mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMemPercent(50).GPUCores(10).Obj()), ""},
		{"another namespace has no quota", mkPod("other", "p", tb.MakeContainer("a").GPUs(1).GPUMem(20000).GPUCores(10).Obj()), ""},
	}
	c := newTestCluster(nodes, used, quota)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.WebhookRefusal(tc.pod)
			got := ""
			if r != nil {
				got = r.String()
			}
			if got != tc.want {
				t.Errorf("refusal %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRegisterFormatByVersion checks the per-node warning for a register annotation the configured HAMi
// version cannot read. kubectl-hami reads every form, but a node the version cannot read is unregistered, as
// for HAMi: its GPUs are listed, no pod is placed there, and the gate says why.
func TestRegisterFormatByVersion(t *testing.T) {
	text9 := "GPU-a,10,16384,100,NVIDIA-A100,0,true,0,hami-core:"
	text7 := "GPU-a,10,16384,100,NVIDIA-A100,0,true:"
	json := codec.FormatNodeRegister(gpus("n1", 1, 16384))
	cases := []struct {
		version, value, want string // want: a part of the problem, "" for none
	}{
		{"2.10", json, ""},
		{"2.10", text9, "text-9 text form, which HAMi v2.8 and later do not read: HAMi v2.10"},
		{"v2.8.0", text7, "text-7 text form, which HAMi v2.8 and later do not read: HAMi v2.8"},
		{"2.7", text9, ""},
		{"2.7", json, "JSON form, which HAMi v2.7 and earlier do not read: HAMi v2.7"},
		{"", text9, "HAMi v2.10"}, // the default
	}
	for _, tc := range cases {
		t.Run(tc.version+" "+tc.value[:5], func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.HAMiVersion = tc.version
			c := NewCluster(cfg)
			n := mkNode("n1", nil, codec.NodeRegisterAnnotation, tc.value)
			probs := c.SetNode(n)
			node := c.Node("n1")
			if node == nil || len(node.GPUs) != 1 {
				t.Fatalf("node not read: %+v", node)
			}
			if unreadable := tc.want != ""; node.Registered == unreadable || (node.UnreadableBy != "") != unreadable {
				t.Errorf("registered %v, unreadable by %q: want registered only when the version reads the form", node.Registered, node.UnreadableBy)
			}
			v := c.Evaluate(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), EvalOptions{})
			if tc.want != "" && (v.Fits || v.Nodes()[0].Code != NodeUnregistered || !strings.Contains(v.Nodes()[0].Check.Detail, tc.want)) {
				t.Errorf("a node the version cannot read: fits %v, %+v", v.Fits, v.Nodes()[0])
			}
			var got string
			for _, p := range probs {
				if strings.Contains(p.Message, "do not read") {
					got = p.Message
				}
			}
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("problem %q, want one with %q", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"3.0", "2", "two.ten", "2.x"} {
		if _, err := ParseHAMiVersion(bad); err == nil {
			t.Errorf("ParseHAMiVersion(%q) accepted", bad)
		}
	}
}

// refGPU is a GPU of the reference model below.
type refGPU struct {
	uuid          string
	numa          int
	healthy       bool
	slots, used   int32
	mem, usedMem  int64
	usedCores     int64
	regPos, index int
}

// refList is sort.Interface over the reference list, for the sort.Sort HAMi runs on more than 12 devices.
type refList struct {
	l    []*refGPU
	less func(i, j int) bool
}

func (r refList) Len() int           { return len(r.l) }
func (r refList) Less(i, j int) bool { return r.less(i, j) }
func (r refList) Swap(i, j int)      { r.l[i], r.l[j] = r.l[j], r.l[i] }

// refContainer is one container of the reference pod.
type refContainer struct {
	count      int
	mem, cores int64
}

// refPlace is HAMi v2.10's device choice written from its source independently of the engine: scores in
// float32, a stable sort of the list (sort.SliceStable, not the engine's sort.Sort) with DeviceUsageList.Less,
// the list kept between containers, and Fit walking it from the end with the gates in order. It returns the
// UUIDs per container, or nil when the pod does not fit.
func refPlace(gs []*refGPU, ctrs []refContainer, policy string, numaBind bool) [][]string {
	list := append([]*refGPU(nil), gs...) // registration order
	var out [][]string
	for _, c := range ctrs {
		if c.count > len(list) {
			return nil
		}
		score := map[*refGPU]float32{}
		for _, g := range list {
			u := float32(g.used) / float32(g.slots)
			k := float32(g.usedCores) / float32(100)
			m := float32(g.usedMem) / float32(g.mem)
			score[g] = float32(10) * (float32(u+k) + m)
		}
		less := func(i, j int) bool {
			a, b := list[i], list[j]
			si, sj := score[a], score[b]
			if strings.Contains(policy, ",") || policy == "numa" {
				// lessByChain: the binpack/spread/numa keys in the order written, numa first with numa-bind,
				// then the index.
				var keys []string
				if numaBind {
					keys = append(keys, "numa")
				}
				for _, k := range strings.Split(policy, ",") {
					if (k == "binpack" || k == "spread" || k == "numa") && !slices.Contains(keys, k) {
						keys = append(keys, k)
					}
				}
				if len(keys) == 0 {
					keys = []string{"spread"}
				}
				for _, k := range keys {
					switch {
					case k == "binpack" && si != sj:
						return si < sj
					case k == "spread" && si != sj:
						return si > sj
					case k == "numa" && a.numa != b.numa:
						return a.numa < b.numa
					}
				}
				return a.index < b.index
			}
			switch {
			case policy == "mutex":
				if a.used != b.used {
					return a.used > b.used
				}
				return a.numa < b.numa
			case numaBind && a.numa == b.numa && policy == "binpack":
				return si < sj
			case numaBind && a.numa == b.numa:
				return si > sj
			case numaBind && policy == "binpack":
				return a.numa > b.numa
			case numaBind:
				return a.numa < b.numa
			case si != sj && policy == "binpack":
				return si < sj
			case si != sj:
				return si > sj
			}
			return a.numa < b.numa
		}
		// HAMi runs sort.Sort(node.Devices): up to 12 devices an insertion sort, which is stable (written here as
		// sort.SliceStable); above 12 Go's pdqsort, which is not, so only sort.Sort itself gives HAMi's order.
		if len(list) > 12 {
			sort.Sort(refList{list, less})
		} else {
			sort.SliceStable(list, less)
		}
		var sel []*refGPU
		prev, need := -1, c.count
		for i := len(list) - 1; i >= 0 && need > 0; i-- {
			g := list[i]
			if !g.healthy {
				continue
			}
			if numaBind && prev != g.numa {
				sel, need, prev = nil, c.count, g.numa
			}
			free := g.mem - g.usedMem
			switch {
			case g.slots <= g.used,
				strings.Contains(policy, "mutex") && g.used > 0,
				free < c.mem,
				100-g.usedCores < c.cores,
				c.cores == 100 && g.used > 0,
				c.cores == 0 && g.usedCores >= 100:
				continue
			}
			sel = append(sel, g)
			need--
		}
		if need > 0 {
			return nil
		}
		var ids []string
		for _, g := range sel {
			g.used++
			g.usedMem += c.mem
			g.usedCores += c.cores
			ids = append(ids, g.uuid)
		}
		out = append(out, ids)
	}
	return out
}

// TestPropertyHAMiGPUOrder checks, on random nodes of up to 16 GPUs, that the engine chooses the GPUs the
// reference model of HAMi's stable sort and walk from the end chooses, container by container.
func TestPropertyHAMiGPUOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 2026))
	policies := []string{"spread", "binpack", "mutex", "spread,numa", "numa", "numa,binpack", "binpack,mutex"}
	agree, fits := 0, 0
	const rounds = 2000
	for round := 0; round < rounds; round++ {
		// Up to 16 GPUs: above 12 HAMi's sort.Sort is an unstable pdqsort, whose order only the same sort gives.
		n := 1 + rng.IntN(16)
		// Indexes in a random registration order, so registration and index disagree.
		perm := rng.Perm(n)
		var gs []*refGPU
		var devs []codec.DeviceInfo
		var pods []*corev1.Pod
		for pos := 0; pos < n; pos++ {
			g := &refGPU{uuid: fmt.Sprintf("gpu-%02d", perm[pos]), index: perm[pos], regPos: pos, numa: rng.IntN(3),
				healthy: rng.IntN(10) > 0, slots: int32(1 + rng.IntN(4)), mem: []int64{8192, 16384}[rng.IntN(2)]}
			d := codec.DeviceInfo{ID: g.uuid, Index: g.index, Count: g.slots, Devmem: g.mem, Devcore: 100, Type: "NVIDIA-A100", Numa: g.numa, Health: g.healthy}
			devs = append(devs, d)
			// Existing pods, each on this GPU alone. Equal usage on several GPUs makes ties common.
			for k := rng.IntN(int(g.slots) + 1); k > 0; k-- {
				m, cr := []int64{1024, 2048, 4096}[rng.IntN(3)], []int64{0, 10, 25}[rng.IntN(3)]
				if g.usedMem+m > g.mem || g.usedCores+cr > 100 {
					break
				}
				g.used++
				g.usedMem += m
				g.usedCores += cr
				name := fmt.Sprintf("x-%d-%d", pos, k)
				pods = append(pods, placedOn(mkPod("other", name, tb.MakeContainer("c").GPUs(1).GPUMem(m).GPUCores(cr).Obj()), "n1",
					fmt.Sprintf("%s,NVIDIA,%d,%d:;", g.uuid, m, cr)))
			}
			gs = append(gs, g)
		}
		policy := policies[rng.IntN(len(policies))]
		numaBind := rng.IntN(3) == 0
		var ctrs []refContainer
		var specs []corev1.Container
		for ci := 0; ci < 1+rng.IntN(2); ci++ {
			rc := refContainer{count: 1 + rng.IntN(3), mem: []int64{1000, 3000, 6000, 12000}[rng.IntN(4)], cores: []int64{0, 10, 30, 100}[rng.IntN(4)]}
			ctrs = append(ctrs, rc)
			specs = append(specs, tb.MakeContainer(fmt.Sprintf("c%d", ci)).GPUs(int64(rc.count)).GPUMem(rc.mem).GPUCores(rc.cores).Obj())
		}
		c := newTestCluster([]*corev1.Node{mkNode("n1", devs)}, pods)
		pod := withAnno(mkPod("ns", "p", specs...), AnnoGPUPolicy, policy)
		if numaBind {
			withAnno(pod, AnnoNumaBind, "true")
		}
		v := c.Evaluate(pod, EvalOptions{})
		want := refPlace(gs, ctrs, policy, numaBind)
		var got [][]string
		if v.Fits {
			got = containerUUIDs(t, v)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round %d: %d GPUs, policy %s, numa-bind %v, containers %+v: engine %v, HAMi's rule %v (%s)",
				round, n, policy, numaBind, ctrs, got, want, v.Summary)
			continue
		}
		agree++
		if want != nil {
			fits++
		}
	}
	if fits < rounds/5 {
		t.Errorf("only %d of %d rounds fit: the generator tests too little", fits, rounds)
	}
	t.Logf("%d/%d rounds agree, %d fit", agree, rounds, fits)
}

// TestTwoQuotasNote: with two ResourceQuotas the tightest decides, and the verdict says HAMi may use the
// looser one.
func TestTwoQuotasNote(t *testing.T) {
	nodes := []*corev1.Node{mkNode("n1", gpus("n1", 2, 16384))}
	tight := mkQuota("ns", "a-tight", "limits.nvidia.com/gpumem", "4000")
	loose := mkQuota("ns", "b-loose", "limits.nvidia.com/gpumem", "8000")
	pod := mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMem(6000).GPUCores(0).Obj())
	v := newTestCluster(nodes, nil, tight, loose).Evaluate(pod, EvalOptions{})
	want := "HAMi may disagree: with several ResourceQuotas it keeps the one it processed last, and b-loose (8000 MiB) set a looser limits.nvidia.com/gpumem than a-tight (4000 MiB)"
	if v.Fits || !strings.Contains(strings.Join(v.Explanation, "\n"), want) {
		t.Errorf("fits %v, explanation %q; want a line with %q", v.Fits, v.Explanation, want)
	}
	// One quota: no such line.
	v = newTestCluster(nodes, nil, tight).Evaluate(pod, EvalOptions{})
	if strings.Contains(strings.Join(v.Explanation, "\n"), "HAMi may disagree") {
		t.Errorf("one quota, yet %q", v.Explanation)
	}
}
