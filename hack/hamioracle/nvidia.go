package main

import (
	"encoding/json"
	"fmt"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
)

// NVIDIA's batches beside the core one (pkg/device/nvidia/device.go at v2.10.0): per-pod policies,
// topology-aware placement over the device plugin's pair scores, and MIG.

func init() {
	families["nvidia-policy"] = &nvidiaVariant{devFamily: nvidia, fname: "nvidia-policy", nodeHook: policyNode, podHook: podPolicies}
	families["nvidia-topology"] = &nvidiaVariant{devFamily: nvidia, fname: "nvidia-topology", nodeHook: pairScores, podHook: topologyPolicy}
	families["nvidia-mig"] = nvidiaMIG
}

// nvidiaVariant is NVIDIA's core family with node annotations (nodeHook) and pod annotations (podHook) added.
type nvidiaVariant struct {
	*devFamily
	fname    string
	nodeHook func(r *rand.Rand, n *corev1.Node, devs []regDev)
	podHook  func(r *rand.Rand, p *corev1.Pod)
}

func (v *nvidiaVariant) name() string { return v.fname }

func (v *nvidiaVariant) node(r *rand.Rand, name string) *corev1.Node {
	n := v.devFamily.node(r, name)
	if v.nodeHook != nil {
		v.nodeHook(r, n, v.nodeDevs(n))
	}
	return n
}

func (v *nvidiaVariant) pending(r *rand.Rand, nodes []*corev1.Node) *corev1.Pod {
	p := v.devFamily.pending(r, nodes)
	if v.podHook != nil {
		v.podHook(r, p)
	}
	return p
}

// podPolicies: hami.io/node-scheduler-policy and hami.io/gpu-scheduler-policy (pkg/util/types.go:69-89),
// single values and sort-key chains, now and then a value HAMi does not know.
// policyNode: the per-pod policy batch has device cordons too (NVIDIA's Fit reads them at v2.10.0).
func policyNode(r *rand.Rand, n *corev1.Node, devs []regDev) { cordon(r, n, devs) }

func podPolicies(r *rand.Rand, p *corev1.Pod) {
	if r.Intn(3) != 0 {
		p.Annotations["hami.io/node-scheduler-policy"] = pick(r, []string{"binpack", "spread", "spread", "Binpack", "none"})
	}
	if r.Intn(4) != 0 {
		p.Annotations["hami.io/gpu-scheduler-policy"] = pick(r, []string{"binpack", "spread", "mutex", "numa", "binpack,numa",
			"spread,numa", "numa,binpack", "binpack,mutex", "mutex,spread", "topology-aware", "topology-aware,mutex", "unknown"})
	}
}

func topologyPolicy(r *rand.Rand, p *corev1.Pod) {
	if r.Intn(4) != 0 {
		p.Annotations["hami.io/gpu-scheduler-policy"] = pick(r, []string{"topology-aware", "topology-aware", "topology-aware,mutex"})
	}
}

// pairScores: the device plugin's hami.io/node-nvidia-score (pkg/device-plugin/nvidiadevice/nvinternal/plugin/
// register.go:297), a JSON list of {uuid, score: {uuid: n}} (device.DevicePairScore); 1 node in 8 has none.
func pairScores(r *rand.Rand, n *corev1.Node, devs []regDev) {
	if len(devs) == 0 || r.Intn(8) == 0 {
		return
	}
	type pair struct {
		ID     string         `json:"uuid"`
		Scores map[string]int `json:"score"`
	}
	score := map[[2]int]int{}
	for i := range devs {
		for j := i + 1; j < len(devs); j++ {
			s := pick(r, []int{0, 10, 40, 60, 100, 200, 200})
			score[[2]int{i, j}], score[[2]int{j, i}] = s, s
		}
	}
	var out []pair
	for i, d := range devs {
		p := pair{ID: d.ID, Scores: map[string]int{}}
		for j, e := range devs {
			if i != j {
				p.Scores[e.ID] = score[[2]int{i, j}]
			}
		}
		out = append(out, p)
	}
	b, _ := json.Marshal(out)
	n.Annotations["hami.io/node-nvidia-score"] = string(b)
}

// ---- MIG: GPUs registered in mode "mig" with the profiles the device plugin found (device.MigProfile), pods
// held in instances recorded in hami.io/vgpu-mig-allocations (mig_allocations.go) ----

type migProfile struct {
	Name       string         `json:"name"`
	MemoryMB   int32          `json:"memoryMB"`
	Core       int32          `json:"core"`
	SliceCount uint32         `json:"sliceCount"`
	Placements []migPlacement `json:"placements"`
}

type migPlacement struct {
	Start uint32 `json:"start"`
	Size  uint32 `json:"size"`
}

type migGPU struct {
	typ      string
	mem      int32
	profiles []migProfile
}

func places(size uint32, starts ...uint32) []migPlacement {
	var out []migPlacement
	for _, s := range starts {
		out = append(out, migPlacement{s, size})
	}
	return out
}

// The A100's profiles as NVML lists them (the chart's migProfileAllowlist keeps 1g, 2g, 3g and 7g), and an
// A30's.
var migGPUs = []migGPU{
	{"NVIDIA A100-SXM4-40GB", 40960, []migProfile{
		{"1g.5gb", 4864, 14, 1, places(1, 0, 1, 2, 3, 4, 5, 6)},
		{"2g.10gb", 9856, 28, 2, places(2, 0, 2, 4)},
		{"3g.20gb", 19968, 42, 3, places(4, 0, 4)},
		{"4g.20gb", 19968, 56, 4, places(4, 0)},
		{"7g.40gb", 40192, 98, 7, places(8, 0)},
	}},
	{"NVIDIA A100-SXM4-80GB", 81920, []migProfile{
		{"1g.10gb", 9728, 14, 1, places(1, 0, 1, 2, 3, 4, 5, 6)},
		{"2g.20gb", 19968, 28, 2, places(2, 0, 2, 4)},
		{"3g.40gb", 40192, 42, 3, places(4, 0, 4)},
		{"7g.79gb", 80896, 98, 7, places(8, 0)},
	}},
	{"NVIDIA A30", 24576, []migProfile{
		{"1g.6gb", 5952, 14, 1, places(1, 0, 1, 2, 3)},
		{"2g.12gb", 11968, 28, 2, places(2, 0, 2)},
		{"4g.24gb", 24192, 56, 4, places(4, 0)},
	}},
}

type migDev struct {
	regDev
	MIGProfiles []migProfile `json:"migProfiles,omitempty"`
}

type migAlloc struct {
	ContainerIndex int          `json:"containerIndex"`
	DeviceIndex    int          `json:"deviceIndex"`
	GPUUUID        string       `json:"gpuUUID"`
	Profile        string       `json:"profile"`
	Placement      migPlacement `json:"placement"`
}

// migFamily: 2 nodes in 3 with MIG GPUs (the rest as the core batch's), pods asking one or two GPUs with
// memory fitting a profile (or not), some with nvidia.com/vgpu-mode.
type migFamily struct{ *devFamily }

var nvidiaMIG = &migFamily{nvidia}

func (m *migFamily) name() string { return "nvidia-mig" }

func migModel(n *corev1.Node) (migGPU, bool) {
	for _, g := range migGPUs {
		if n.Labels["nvidia.com/gpu.product"] == g.typ {
			return g, true
		}
	}
	return migGPU{}, false
}

func (m *migFamily) node(r *rand.Rand, name string) *corev1.Node {
	if r.Intn(3) == 0 {
		return m.devFamily.node(r, name)
	}
	n := baseNode(name)
	g := pick(r, migGPUs)
	n.Labels["nvidia.com/gpu.product"] = g.typ
	ng := 1 + r.Intn(8)
	var devs []migDev
	for i := 0; i < ng; i++ {
		devs = append(devs, migDev{regDev: regDev{ID: fmt.Sprintf("GPU-%s-%d", name, i), Index: uint(i), Count: 7, Devmem: g.mem,
			Devcore: 100, Type: g.typ, Numa: i * 2 / ng, Mode: "mig", Health: r.Intn(20) != 0}, MIGProfiles: g.profiles})
	}
	b, _ := json.Marshal(devs)
	n.Annotations[m.register] = string(b)
	setCount(r, n, m.countRes, int64(ng*7))
	return n
}

func (m *migFamily) running(r *rand.Rand, n *corev1.Node, existing []*corev1.Pod, ns string, i int, overcommit bool) []*corev1.Pod {
	g, ok := migModel(n)
	if !ok {
		return m.devFamily.running(r, n, existing, ns, i, overcommit)
	}
	devs := m.nodeDevs(n)
	if len(devs) == 0 {
		return nil
	}
	// Slices already held per GPU.
	held := map[string][8]bool{}
	for _, p := range existing {
		if p.Spec.NodeName != n.Name {
			continue
		}
		var as []migAlloc
		_ = json.Unmarshal([]byte(p.Annotations["hami.io/vgpu-mig-allocations"]), &as)
		for _, a := range as {
			h := held[a.GPUUUID]
			for s := a.Placement.Start; s < a.Placement.Start+a.Placement.Size && s < 8; s++ {
				h[s] = true
			}
			held[a.GPUUUID] = h
		}
	}
	d := pick(r, devs)
	prof := pick(r, g.profiles)
	h := held[d.ID]
	var place *migPlacement
	for _, pl := range prof.Placements {
		free := true
		for s := pl.Start; s < pl.Start+pl.Size && s < 8; s++ {
			free = free && !h[s]
		}
		if free {
			place = &pl
			break
		}
	}
	if place == nil {
		return nil
	}
	p := basePod(ns, fmt.Sprintf("run-%d", i))
	p.Spec.NodeName = n.Name
	p.Spec.SchedulerName = "hami-scheduler"
	p.Status.Phase = corev1.PodRunning
	p.Spec.Containers = []corev1.Container{container("c0", map[string]int64{m.countRes: 1, m.memRes: int64(prof.MemoryMB)})}
	as, _ := json.Marshal([]migAlloc{{ContainerIndex: 0, DeviceIndex: 0, GPUUUID: d.ID, Profile: prof.Name, Placement: *place}})
	p.Annotations["hami.io/vgpu-node"] = n.Name
	p.Annotations["hami.io/vgpu-time"] = "1790000000"
	p.Annotations[m.allocated] = fmt.Sprintf("%s,%s,%d,%d:;", d.ID, m.vendor, prof.MemoryMB, prof.Core)
	p.Annotations[m.toAllocate] = ";"
	p.Annotations["hami.io/vgpu-mig-allocations"] = string(as)
	p.Annotations["nvidia.com/vgpu-mode"] = "mig"
	p.Annotations["hami.io/bind-phase"] = "success"
	return []*corev1.Pod{p}
}

func (m *migFamily) pending(r *rand.Rand, nodes []*corev1.Node) *corev1.Pod {
	p := basePod(pick(r, []string{"default", "team-a"}), "pending")
	ctr := func(name string) corev1.Container {
		lim := map[string]int64{m.countRes: int64(pick(r, []int{1, 1, 1, 2, 3}))}
		if r.Intn(5) != 0 {
			lim[m.memRes] = int64(pick(r, []int{3000, 4864, 9000, 10000, 19968, 20000, 30000, 40000, 80000}))
		}
		if r.Intn(4) == 0 {
			lim[m.coresRes] = int64(pick(r, []int{10, 30, 50, 100}))
		}
		return container(name, lim)
	}
	switch x := r.Intn(10); {
	case x < 7:
		p.Spec.Containers = []corev1.Container{ctr("main")}
	case x < 9:
		p.Spec.Containers = []corev1.Container{ctr("main"), ctr("second")}
	default:
		p.Spec.InitContainers = []corev1.Container{ctr("init")}
		p.Spec.Containers = []corev1.Container{ctr("main")}
	}
	if r.Intn(3) == 0 {
		p.Annotations["nvidia.com/vgpu-mode"] = pick(r, []string{"mig", "mig", "hami-core"})
	}
	if r.Intn(8) == 0 {
		p.Annotations[m.useType] = pick(r, []string{"A100", "A30", "A100-SXM4-80GB", "T4"})
	}
	var uuids []string
	for _, n := range nodes {
		for _, d := range m.nodeDevs(n) {
			uuids = append(uuids, d.ID)
		}
	}
	uuidSelectors(r, p, uuids, m.useUUID, m.noUseUUID)
	return p
}
