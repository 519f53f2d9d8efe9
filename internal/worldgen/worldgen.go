// Package worldgen generates random, valid clusters from a seed: the nodes, pods, ResourceQuotas and Volcano
// objects kubectl-hami reads, in every shape its reader accepts. The same seed gives the same world, so a
// failing property test names a seed that reproduces it. Used by the property tests of every surface
// (commands, terminal UI, extender) and by `make soak-worlds`.
package worldgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// Options size a world. The zero value gives small worlds (1-6 nodes, up to 16 pods).
type Options struct {
	MaxNodes int
	MaxPods  int
	// Malformed is the share (0..1) of annotations written wrong on purpose; default 0.05.
	Malformed float64
	// Kube makes a world a real kube-apiserver and kube-scheduler hold as it is, with kube-scheduler's own
	// constraints (taints, tolerations, selectors, required affinity, cordons, CPU/memory/pod pressure) and
	// pending pods of HAMi's and the default scheduler (kube.go). Off, a seed's world is what it always was.
	Kube bool
}

// Epoch is the creation time of every object; evaluate at Epoch plus an hour.
var Epoch = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// Schedulers the pods are addressed to.
var Schedulers = []string{"hami-scheduler", "hami-scheduler", "hami-scheduler", "volcano", "default-scheduler", ""}

type model struct {
	product string
	mem     int64
	mig     bool
}

var models = []model{
	{"NVIDIA-A100-SXM4-80GB", 81920, true},
	{"NVIDIA-H100-80GB-HBM3", 81559, true},
	{"NVIDIA-Tesla-T4", 15360, false},
	{"NVIDIA-L4", 23034, false},
}

type gen struct {
	r    *rand.Rand
	opts Options
	s    *snapshot.Snapshot
	// per node: name, model, GPUs (uuid, mem) for placing running pods
	nodes []genNode
	cards []string
	nss   []string
}

type genNode struct {
	name  string
	model model
	gpus  []codec.DeviceInfo
	hami  bool
}

// World returns the world of a seed.
func World(seed uint64, opts Options) *snapshot.Snapshot {
	if opts.MaxNodes <= 0 {
		opts.MaxNodes = 6
	}
	if opts.MaxPods <= 0 {
		opts.MaxPods = 16
	}
	if opts.Malformed == 0 {
		opts.Malformed = 0.05
	}
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), opts: opts,
		s: &snapshot.Snapshot{Source: fmt.Sprintf("worldgen seed %d", seed)}}
	g.nss = []string{"team-a", "team-b", "default"}[:1+g.r.IntN(3)]
	for i := 0; i < 1+g.r.IntN(opts.MaxNodes); i++ {
		g.node(i)
	}
	g.quotas()
	g.volcano()
	for i := 0; i < g.r.IntN(opts.MaxPods+1); i++ {
		g.pod(i)
	}
	g.vendors(seed)
	if opts.Kube {
		g.kube(seed)
	}
	return g.s
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }
func (g *gen) bad() bool             { return g.chance(g.opts.Malformed) }
func (g *gen) pick(xs []string) string {
	return xs[g.r.IntN(len(xs))]
}

func meta(name, ns string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, CreationTimestamp: metav1.NewTime(Epoch), Annotations: map[string]string{}, Labels: map[string]string{}}
}

func qty(v int64) resource.Quantity { return *resource.NewQuantity(v, resource.DecimalSI) }

func (g *gen) node(i int) {
	m := models[g.r.IntN(len(models))]
	n := &corev1.Node{ObjectMeta: meta(fmt.Sprintf("node-%02d", i), "")}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	alloc := corev1.ResourceList{corev1.ResourceCPU: qty(int64(8 << g.r.IntN(4))), corev1.ResourceMemory: resource.MustParse(strconv.Itoa(64<<g.r.IntN(3)) + "Gi"),
		corev1.ResourcePods: qty(110)}
	count := 1 + g.r.IntN(8)
	gn := genNode{name: n.Name, model: m}
	kind := g.r.IntN(10) // 0-5 HAMi, 6 MIG (HAMi), 7 MPS slices, 8 NVIDIA whole cards, 9 no GPU
	if m.mig && kind == 6 {
		kind = 6
	} else if kind == 6 {
		kind = 0
	}
	if kind <= 6 {
		gn.hami = true
		split := int32(1 + g.r.IntN(10))
		mode := ""
		if kind == 6 {
			mode = "mig"
		}
		for k := 0; k < count; k++ {
			d := codec.DeviceInfo{ID: fmt.Sprintf("GPU-%s-%d", n.Name, k), Index: k, Count: split, Devmem: m.mem, Devcore: 100,
				Type: "NVIDIA " + strings.TrimPrefix(m.product, "NVIDIA-"), Numa: k * 2 / count, Mode: mode, Health: !g.chance(0.05)}
			if mode == "mig" {
				d.MigProfiles = []codec.MigProfile{
					{Name: "1g.10gb", MemoryMB: 9856, Core: 14, SliceCount: 1, Placements: []codec.MigPlacement{{Start: 0, Size: 1}, {Start: 1, Size: 1}, {Start: 2, Size: 1}, {Start: 3, Size: 1}, {Start: 4, Size: 1}, {Start: 5, Size: 1}, {Start: 6, Size: 1}}},
					{Name: "3g.40gb", MemoryMB: 40192, Core: 42, SliceCount: 3, Placements: []codec.MigPlacement{{Start: 0, Size: 4}, {Start: 4, Size: 4}}},
					{Name: "7g.80gb", MemoryMB: 80384, Core: 100, SliceCount: 7, Placements: []codec.MigPlacement{{Start: 0, Size: 8}}},
				}
			}
			gn.gpus = append(gn.gpus, d)
		}
		var reg string
		switch f := g.r.IntN(3); {
		case g.bad():
			reg = `[{"id":"GPU-x","count":`
		case f == 0 && mode == "":
			reg = codec.FormatNodeRegisterLegacy(gn.gpus)
		case f == 1 && mode == "":
			// HAMi <= v2.4's seven fields.
			var b strings.Builder
			for _, d := range gn.gpus {
				fmt.Fprintf(&b, "%s,%d,%d,%d,%s,%d,%t:", d.ID, d.Count, d.Devmem, d.Devcore, d.Type, d.Numa, d.Health)
			}
			reg = b.String()
		default:
			reg = codec.FormatNodeRegister(gn.gpus)
		}
		n.Annotations[codec.NodeRegisterAnnotation] = reg
		alloc["nvidia.com/gpu"] = qty(int64(count) * int64(gn.gpus[0].Count))
		if g.chance(0.1) {
			// The device plugin is not serving, past HAMi's handshake grace (a day-old stamp reads as old in every
			// time zone); a node never stamped would still be judged by HAMi.
			alloc["nvidia.com/gpu"] = qty(0)
			n.Annotations[codec.NodeHandshakeAnnotation] = codec.FormatHandshakeRequesting(Epoch.Add(-24 * time.Hour))
		}
		if g.chance(0.15) {
			n.Annotations[codec.NodeCordonAnnotation] = codec.FormatCordon([]string{gn.gpus[g.r.IntN(count)].ID})
		}
		if g.chance(0.1) {
			n.Annotations[codec.NodeLockAnnotation] = codec.FormatNodeLock(codec.NodeLock{Time: Epoch, Namespace: g.pick(g.nss), Pod: "locker"})
		}
		if g.chance(0.2) && count > 1 {
			n.Annotations[codec.NodePairScoreAnnotation] = codec.FormatPairScores([]codec.PairScore{{UUID: gn.gpus[0].ID, Scores: map[string]int{gn.gpus[1].ID: 100}}})
		}
	}
	product := m.product
	switch kind {
	case 7:
		alloc["nvidia.com/gpu.shared"] = qty(int64(count * 4))
		n.Labels["nvidia.com/gpu.replicas"] = "4"
	case 8:
		alloc["nvidia.com/gpu"] = qty(int64(count))
		if m.mig && g.chance(0.5) {
			alloc["nvidia.com/mig-1g.10gb"] = qty(7)
		}
	}
	if kind != 9 {
		n.Labels["nvidia.com/gpu.product"] = product
		n.Labels["nvidia.com/gpu.count"] = strconv.Itoa(count)
		n.Labels["nvidia.com/gpu.memory"] = strconv.FormatInt(m.mem, 10)
		g.cards = append(g.cards, product)
		if kind == 8 && alloc["nvidia.com/mig-1g.10gb"] != (resource.Quantity{}) {
			g.cards = append(g.cards, product+"/mig-1g.10gb-mixed")
		}
		if kind == 7 {
			g.cards = append(g.cards, fmt.Sprintf("%s/mps-%dg*1/4", product, (m.mem+512)/1024))
		}
	}
	if g.chance(0.1) {
		n.Spec.Unschedulable = true
	}
	if g.chance(0.15) {
		n.Spec.Taints = []corev1.Taint{{Key: "gpu", Value: "reserved", Effect: corev1.TaintEffectNoSchedule}}
	}
	n.Labels["pool"] = g.pick([]string{"a", "b"})
	n.Status.Allocatable, n.Status.Capacity = alloc, alloc.DeepCopy()
	g.s.Nodes = append(g.s.Nodes, n)
	g.nodes = append(g.nodes, gn)
}

func (g *gen) quotas() {
	for _, ns := range g.nss {
		for k := 0; k < g.r.IntN(3); k++ {
			q := &corev1.ResourceQuota{ObjectMeta: meta(fmt.Sprintf("gpu-quota-%d", k), ns)}
			q.Spec.Hard = corev1.ResourceList{}
			if g.chance(0.7) {
				q.Spec.Hard["limits.nvidia.com/gpumem"] = qty(int64(20000 + g.r.IntN(400000)))
			}
			if g.chance(0.6) {
				q.Spec.Hard["limits.nvidia.com/gpucores"] = qty(int64(50 + g.r.IntN(800)))
			}
			if g.chance(0.2) {
				q.Spec.Hard["requests.nvidia.com/gpu"] = qty(int64(g.r.IntN(8)))
			}
			g.s.Quotas = append(g.s.Quotas, q)
		}
	}
}

func (g *gen) volcano() {
	if len(g.cards) == 0 || !g.chance(0.6) {
		return
	}
	g.s.Volcano = true
	for _, name := range []string{"research", "serving"}[:1+g.r.IntN(2)] {
		q := &unstructured.Unstructured{}
		q.SetAPIVersion("scheduling.volcano.sh/v1beta1")
		q.SetKind("Queue")
		q.SetName(name)
		q.SetCreationTimestamp(metav1.NewTime(Epoch))
		quota := map[string]int64{}
		for _, c := range g.cards {
			if g.chance(0.7) {
				quota[c] = int64(g.r.IntN(6))
			}
		}
		js, _ := json.Marshal(quota)
		raw := string(js)
		if g.bad() {
			raw = `{"` + g.cards[0] + `":`
		}
		q.SetAnnotations(map[string]string{codec.CardQuotaAnnotation: raw})
		_ = unstructured.SetNestedField(q.Object, "Open", "status", "state")
		g.s.Queues = append(g.s.Queues, q)
	}
	for _, ns := range g.nss {
		if !g.chance(0.5) {
			continue
		}
		pg := &unstructured.Unstructured{}
		pg.SetAPIVersion("scheduling.volcano.sh/v1beta1")
		pg.SetKind("PodGroup")
		pg.SetName("job-" + ns)
		pg.SetNamespace(ns)
		pg.SetCreationTimestamp(metav1.NewTime(Epoch))
		_ = unstructured.SetNestedField(pg.Object, g.s.Queues[0].GetName(), "spec", "queue")
		_ = unstructured.SetNestedField(pg.Object, int64(1+g.r.IntN(2)), "spec", "minMember")
		_ = unstructured.SetNestedField(pg.Object, g.pick([]string{"Pending", "Inqueue", "Running"}), "status", "phase")
		pg.SetAnnotations(map[string]string{codec.CardRequestAnnotation: fmt.Sprintf(`{%q: %d}`, g.cardName(), 1+g.r.IntN(3))})
		g.s.PodGroups = append(g.s.PodGroups, pg)
	}
}

// cardName is one card or an A|B alternative of two.
func (g *gen) cardName() string {
	a := g.pick(g.cards)
	if g.chance(0.3) {
		if b := g.pick(g.cards); b != a {
			return a + "|" + b
		}
	}
	return a
}

func (g *gen) container(name string, hamiRes bool) corev1.Container {
	c := corev1.Container{Name: name, Image: "pytorch"}
	l := corev1.ResourceList{corev1.ResourceCPU: qty(int64(1 + g.r.IntN(4))), corev1.ResourceMemory: resource.MustParse("1Gi")}
	if hamiRes {
		l["nvidia.com/gpu"] = qty(int64(1 + g.r.IntN(3)))
		switch g.r.IntN(4) {
		case 0:
			l["nvidia.com/gpumem"] = qty(int64(1000 + g.r.IntN(40000)))
		case 1:
			l["nvidia.com/gpumem-percentage"] = qty(int64(10 + g.r.IntN(90)))
		case 2:
			if g.bad() {
				l["nvidia.com/gpumem"] = resource.MustParse("16Gi")
			}
		}
		if g.chance(0.7) {
			l["nvidia.com/gpucores"] = qty(int64(g.r.IntN(101)))
		}
	}
	c.Resources.Limits = l
	return c
}

func (g *gen) pod(i int) {
	ns := g.pick(g.nss)
	p := &corev1.Pod{ObjectMeta: meta(fmt.Sprintf("pod-%02d", i), ns)}
	p.Spec.SchedulerName = g.pick(Schedulers)
	hami := p.Spec.SchedulerName != "volcano" || g.chance(0.3)
	p.Spec.Containers = []corev1.Container{g.container("main", hami)}
	if g.chance(0.2) {
		p.Spec.Containers = append(p.Spec.Containers, g.container("sidecar", hami && g.chance(0.5)))
	}
	if g.chance(0.15) {
		ic := g.container("init", hami && g.chance(0.5))
		if g.chance(0.3) {
			always := corev1.ContainerRestartPolicyAlways
			ic.RestartPolicy = &always // a native sidecar
		}
		p.Spec.InitContainers = []corev1.Container{ic}
	}
	a := p.Annotations
	for _, kv := range [][2]string{
		{"nvidia.com/use-gputype", "A100"}, {"nvidia.com/nouse-gputype", "T4"}, {"nvidia.com/numa-bind", "true"},
		{"hami.io/gpu-scheduler-policy", g.pick([]string{"binpack", "spread", "topology-aware", "binpack,numa"})},
		{"hami.io/node-scheduler-policy", g.pick([]string{"binpack", "spread"})},
		{"nvidia.com/vgpu-mode", g.pick([]string{"hami-core", "mig"})},
		{"hami.io/device-scoring-weights", "slot=1,core=2,memory=1"},
	} {
		if g.chance(0.08) {
			a[kv[0]] = kv[1]
			if g.bad() {
				a[kv[0]] = "%%bogus"
			}
		}
	}
	if len(g.s.Queues) > 0 && (p.Spec.SchedulerName == "volcano" || g.chance(0.2)) {
		a[codec.CardNameAnnotation] = g.cardName()
		if g.bad() {
			a[codec.CardNameAnnotation] = "|"
		}
		if len(g.s.PodGroups) > 0 && g.chance(0.3) {
			a[codec.GroupNameAnnotation] = g.s.PodGroups[0].GetName()
			p.Namespace = g.s.PodGroups[0].GetNamespace()
		} else {
			a[codec.QueueNameAnnotation] = g.s.Queues[g.r.IntN(len(g.s.Queues))].GetName()
		}
		if !hami {
			card := a[codec.CardNameAnnotation]
			res := "nvidia.com/gpu"
			if strings.Contains(card, "/mig-1g.10gb") {
				res = "nvidia.com/mig-1g.10gb"
			} else if strings.Contains(card, "/mps-") {
				res = "nvidia.com/gpu.shared"
			}
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceName(res)] = qty(int64(1 + g.r.IntN(2)))
		}
	}
	if g.chance(0.1) {
		p.Spec.NodeSelector = map[string]string{"pool": g.pick([]string{"a", "b"})}
	}
	if g.chance(0.1) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
	}
	// Some pods run, placed on a HAMi node with HAMi's allocation annotations.
	if hami && g.chance(0.5) {
		g.place(p)
	} else {
		p.Status.Phase = corev1.PodPending
	}
	g.s.Pods.Add(p)
}

// place binds a HAMi pod to a HAMi node with a plausible allocation (which may oversubscribe: the reader must
// cope with what a cluster holds). MIG nodes get no running pods: a real one's usage always comes with its
// hami.io/vgpu-mig-allocations, and usage without them would make a MIG GPU look free to whole profiles.
func (g *gen) place(p *corev1.Pod) {
	var cands []genNode
	for _, n := range g.nodes {
		if n.hami && len(n.gpus) > 0 && n.gpus[0].Mode != "mig" {
			cands = append(cands, n)
		}
	}
	if len(cands) == 0 {
		p.Status.Phase = corev1.PodPending
		return
	}
	n := cands[g.r.IntN(len(cands))]
	p.Spec.NodeName = n.name
	p.Status.Phase = corev1.PodRunning
	if g.chance(0.1) {
		p.Status.Phase = corev1.PodSucceeded
	}
	var devs codec.PodDevices
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range cs {
			var cd codec.ContainerDevices
			if q, ok := c.Resources.Limits["nvidia.com/gpu"]; ok {
				for k := int64(0); k < min(q.Value(), int64(len(n.gpus))); k++ {
					d := n.gpus[(int(k)+g.r.IntN(len(n.gpus)))%len(n.gpus)]
					cd = append(cd, codec.ContainerDevice{UUID: d.ID, Type: "NVIDIA", UsedMem: int64(1000 + g.r.IntN(20000)), UsedCores: int64(g.r.IntN(60))})
				}
			}
			devs = append(devs, cd)
		}
	}
	v := codec.FormatPodDevices(devs)
	if g.bad() {
		v = "GPU-x,NVIDIA,notanumber"
	}
	p.Annotations[codec.PodNodeAnnotation] = n.name
	p.Annotations[codec.PodAllocatedAnnotation] = v
	p.Annotations[codec.PodToAllocateAnnotation] = v
	p.Annotations[codec.PodBindPhaseAnnotation] = codec.BindPhaseSuccess
}
