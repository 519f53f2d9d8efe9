package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// scenario is one cluster and one pending pod.
type scenario struct {
	Seed    int64
	Nodes   []*corev1.Node
	Pods    []*corev1.Pod
	Quotas  []*corev1.ResourceQuota
	Pending *corev1.Pod
}

func (s *scenario) size() int {
	n := len(s.Nodes) + len(s.Pods) + len(s.Quotas)
	for _, c := range append(append([]corev1.Container{}, s.Pending.Spec.InitContainers...), s.Pending.Spec.Containers...) {
		n += len(c.Resources.Limits)
	}
	return n + len(s.Pending.Annotations)
}

// family generates one device family's nodes, running pods and pending pods.
type family interface {
	name() string
	// node returns a node with the family's devices (nil devices: a node without them).
	node(r *rand.Rand, name string) *corev1.Node
	// running returns pods HAMi placed on node earlier, beside the pods already there (existing); unless
	// overcommit, they fit in what the node registers.
	running(r *rand.Rand, node *corev1.Node, existing []*corev1.Pod, ns string, i int, overcommit bool) []*corev1.Pod
	// pending returns the pod to place.
	pending(r *rand.Rand, nodes []*corev1.Node) *corev1.Pod
	// quota returns a ResourceQuota on the family's resources for namespace ns.
	quota(r *rand.Rand, ns string) *corev1.ResourceQuota
	// handshake is node's handshake annotation in a running cluster.
	handshake(node *corev1.Node) (key, value string)
}

var families = map[string]family{
	"nvidia":    nvidia,
	"hygon":     hygon,
	"amd":       amd,
	"cambricon": cambricon,
	"mixed":     &mixedFamily{fams: []*devFamily{nvidia, nvidia, hygon, amd, cambricon}},
}

// mixedFamily draws each node from one of fams (NVIDIA twice as often) and the pending pod from one of them.
type mixedFamily struct {
	fams []*devFamily
	last *devFamily
}

const familyLabel = "hamioracle.kubectl-hami.io/family"

func (m *mixedFamily) name() string { return "mixed" }

func (m *mixedFamily) of(n *corev1.Node) *devFamily {
	for _, f := range m.fams {
		if f.fname == n.Labels[familyLabel] {
			return f
		}
	}
	return m.fams[0]
}

func (m *mixedFamily) node(r *rand.Rand, name string) *corev1.Node {
	f := pick(r, m.fams)
	n := f.node(r, name)
	n.Labels[familyLabel] = f.fname
	return n
}

func (m *mixedFamily) handshake(n *corev1.Node) (string, string) { return m.of(n).handshake(n) }

func (m *mixedFamily) running(r *rand.Rand, n *corev1.Node, existing []*corev1.Pod, ns string, i int, overcommit bool) []*corev1.Pod {
	return m.of(n).running(r, n, existing, ns, i, overcommit)
}

func (m *mixedFamily) pending(r *rand.Rand, nodes []*corev1.Node) *corev1.Pod {
	m.last = pick(r, m.fams)
	return m.last.pending(r, nodes)
}

func (m *mixedFamily) quota(r *rand.Rand, ns string) *corev1.ResourceQuota {
	return m.last.quota(r, ns)
}

// coreOnly keeps to the core path: every node has the family's devices, a serving device plugin and a
// handshake, and memory percentages stay within 0-100. The random draws are the same, so a seed's scenario
// differs from the full one only there.
var coreOnly bool

type genOptions struct {
	quota      float64 // chance of a ResourceQuota in the pending pod's namespace
	overcommit bool    // running pods may hold more than a device registers
}

func generate(f family, seed int64, o genOptions) *scenario {
	r := rand.New(rand.NewSource(seed))
	s := &scenario{Seed: seed}
	nn := 1 + r.Intn(5)
	for i := 0; i < nn; i++ {
		n := f.node(r, fmt.Sprintf("node-%d", i))
		// A node without a handshake is new to the scheduler.
		if k, v := f.handshake(n); k != "" && (r.Intn(10) != 0 || coreOnly) {
			n.Annotations[k] = v
		}
		s.Nodes = append(s.Nodes, n)
	}
	namespaces := []string{"default", "team-a"}
	for _, n := range s.Nodes {
		k := r.Intn(4)
		for j := 0; j < k; j++ {
			s.Pods = append(s.Pods, f.running(r, n, s.Pods, namespaces[r.Intn(2)], len(s.Pods), o.overcommit)...)
		}
	}
	s.Pending = f.pending(r, s.Nodes)
	if r.Float64() < o.quota {
		q := f.quota(r, s.Pending.Namespace)
		if cf, ok := f.(*chipFamily); ok {
			q = cf.quotaFor(r, s.Pending)
		}
		if q != nil {
			s.Quotas = append(s.Quotas, q)
		}
	}
	return s
}

// baseNode is a Ready node with room for everything kube-scheduler checks.
func baseNode(name string) *corev1.Node {
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}, Annotations: map[string]string{}},
		Status: corev1.NodeStatus{
			Capacity:    rl.DeepCopy(),
			Allocatable: rl.DeepCopy(),
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

func basePod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name), Annotations: map[string]string{}},
	}
}

func container(name string, limits map[string]int64) corev1.Container {
	c := corev1.Container{Name: name, Image: "busybox"}
	if len(limits) > 0 {
		c.Resources.Limits = corev1.ResourceList{}
		for k, v := range limits {
			c.Resources.Limits[corev1.ResourceName(k)] = *resource.NewQuantity(v, resource.DecimalSI)
		}
	}
	return c
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.Intn(len(xs))] }

// ---- families whose devices are listed in a register annotation ----

// devFamily is a family whose node component writes a register annotation and whose pods ask for a count,
// memory and cores (NVIDIA, Hygon DCU).
type devFamily struct {
	fname        string
	idPrefix     string // device IDs: <prefix>-<node>-<i>
	register     string // the node's register annotation
	jsonFormat   bool   // the v2.8+ JSON list (NVIDIA) rather than id,count,devmem,devcore,type,numa,health:
	handshakeKey string
	reported     bool // the device plugin writes Reported <time> (not NVIDIA since v2.8)
	// capacityHealth: HAMi reads health from the capacity of the count resource (the number of devices), no
	// handshake (AMD).
	capacityHealth bool
	// capCores and capMem: the devices come from the node's capacity of these resources (100 cores per device,
	// memory in memUnit MiB over all devices), named <node>-<capName>-<i>, of type capType (Cambricon).
	capCores, capMem, capName, capType string
	memUnit                            int64 // MiB per unit of the memory resource; 0: 1
	countRes                           string
	memRes                             string
	pctRes                             string // "" when the family has none
	coresRes                           string
	vendor                             string // the device list's second field
	allocated                          string // the pod annotation HAMi counts usage from
	toAllocate                         string
	models                             []gpuModel
	typeWords                          []string // substrings for the type selectors, some matching no model
	useType                            string
	noUseType                          string
	useUUID                            string
	noUseUUID                          string
	numaBind                           string // "" when the family has none
	pcts                               []int  // memory percentages asked
}

type gpuModel struct {
	typ   string
	mem   int32
	cores int32 // devcore; 0: 100
}

var nvidia = &devFamily{
	fname: "nvidia", idPrefix: "GPU", register: "hami.io/node-nvidia-register", jsonFormat: true, handshakeKey: "hami.io/node-handshake",
	countRes: "nvidia.com/gpu", memRes: "nvidia.com/gpumem", pctRes: "nvidia.com/gpumem-percentage", coresRes: "nvidia.com/gpucores",
	vendor: "NVIDIA", allocated: "hami.io/vgpu-devices-allocated", toAllocate: "hami.io/vgpu-devices-to-allocate",
	// v2.8+ register types: the prefix "NVIDIA-" only when the NVML name does not start with NVIDIA.
	models: []gpuModel{
		{"NVIDIA-Tesla T4", 15360, 0},
		{"NVIDIA A100-SXM4-80GB", 81920, 0},
		{"NVIDIA A10", 23028, 0},
		{"NVIDIA H100 80GB HBM3", 81559, 0},
	},
	typeWords: []string{"A100", "T4", "a10", "H100", "A100,T4", "V100"},
	useType:   "nvidia.com/use-gputype", noUseType: "nvidia.com/nouse-gputype",
	useUUID: "nvidia.com/use-gpuuuid", noUseUUID: "nvidia.com/nouse-gpuuuid",
	numaBind: "nvidia.com/numa-bind",
	pcts:     []int{10, 25, 50, 100, 120},
}

var hygon = &devFamily{
	fname: "hygon", idPrefix: "DCU", register: "hami.io/node-dcu-register", handshakeKey: "hami.io/node-handshake-dcu", reported: true,
	countRes: "hygon.com/dcunum", memRes: "hygon.com/dcumem", coresRes: "hygon.com/dcucores",
	vendor: "DCU", allocated: "hami.io/dcu-devices-allocated", toAllocate: "hami.io/dcu-devices-to-allocate",
	models:    []gpuModel{{"DCU-Z100", 32768, 0}, {"DCU-Z100L", 32768, 0}, {"DCU-K100", 65536, 0}},
	typeWords: []string{"Z100", "K100", "Z100L", "BW"},
	useType:   "hygon.com/use-dcutype", noUseType: "hygon.com/nouse-dcutype",
	useUUID: "hygon.com/use-gpuuuid", noUseUUID: "hygon.com/nouse-gpuuuid",
}

var amd = &devFamily{
	fname: "amd", idPrefix: "AMD", jsonFormat: true, register: "hami.io/node-amd-register",
	countRes: "amd.com/gpu", memRes: "amd.com/gpumem", coresRes: "amd.com/gpucores", capacityHealth: true,
	vendor: "AMD", allocated: "hami.io/amd-devices-allocated", toAllocate: "hami.io/amd-devices-to-allocate",
	// HAMi finds a node's devices of a request's type by the type containing the family word
	// (pkg/scheduler/score.go:43-52); HAMi's own tests register "AMD-MI300X".
	models:    []gpuModel{{"AMD-MI300X", 196608, 304}, {"AMD-MI210", 65536, 104}},
	typeWords: []string{"MI300", "mi210", "MI300X,MI210", "MI250"},
	useType:   "amd.com/use-gputype", noUseType: "amd.com/nouse-gputype",
	useUUID: "amd.com/use-gpu-uuid", noUseUUID: "amd.com/nouse-gpu-uuid",
}

var cambricon = &devFamily{
	fname: "cambricon", capCores: "cambricon.com/mlu.smlu.vcore", capMem: "cambricon.com/mlu.smlu.vmemory",
	capName: "cambricon-mlu", capType: "MLU", memUnit: 256,
	countRes: "cambricon.com/vmlu", memRes: "cambricon.com/mlu.smlu.vmemory", coresRes: "cambricon.com/mlu.smlu.vcore",
	vendor: "MLU", allocated: "hami.io/cambricon-mlu-devices-allocated", toAllocate: "hami.io/cambricon-mlu-devices-to-allocate",
	models:    []gpuModel{{"MLU370-X8", 24576, 0}, {"MLU370-X4", 24576, 0}},
	typeWords: []string{"MLU370", "X8", "MLU590"},
	useType:   "cambricon.com/use-mlutype", noUseType: "cambricon.com/nouse-mlutype",
	useUUID: "cambricon.com/use-gpuuuid", noUseUUID: "cambricon.com/nouse-gpuuuid",
}

type regDev struct {
	ID      string `json:"id,omitempty"`
	Index   uint   `json:"index,omitempty"`
	Count   int32  `json:"count,omitempty"`
	Devmem  int32  `json:"devmem,omitempty"`
	Devcore int32  `json:"devcore,omitempty"`
	Type    string `json:"type,omitempty"`
	Numa    int    `json:"numa,omitempty"`
	Mode    string `json:"mode,omitempty"`
	Health  bool   `json:"health,omitempty"`
	// CustomInfo: Ascend's NetworkID, Vastai's die strategy and card (nil for the other families).
	CustomInfo map[string]any `json:"custominfo,omitempty"`
}

func (f *devFamily) name() string { return f.fname }

func (f *devFamily) unit() int64 { return cmp.Or(f.memUnit, 1) }

func (f *devFamily) node(r *rand.Rand, name string) *corev1.Node {
	n := baseNode(name)
	if r.Intn(10) == 0 && !coreOnly {
		return n // a node without the family's devices
	}
	ng := 1 + r.Intn(8)
	model := pick(r, f.models)
	count := int32(10)
	if r.Intn(4) == 0 {
		count = int32(1 + r.Intn(4))
	}
	if f.capCores != "" {
		// One model per node (the capacity has no per-device detail); HAMi's type is always capType.
		r.Intn(4)
		n.Labels["Model"] = model.typ
		for _, rl := range []corev1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
			rl[corev1.ResourceName(f.capCores)] = *resource.NewQuantity(int64(100*ng), resource.DecimalSI)
			rl[corev1.ResourceName(f.capMem)] = *resource.NewQuantity(int64(ng)*int64(model.mem)/f.memUnit, resource.DecimalSI)
			rl[corev1.ResourceName(f.countRes)] = *resource.NewQuantity(int64(100*ng), resource.DecimalSI)
		}
		return n
	}
	var devs []regDev
	for i := 0; i < ng; i++ {
		m := model
		if r.Intn(8) == 0 {
			m = pick(r, f.models)
		}
		d := regDev{
			ID: fmt.Sprintf("%s-%s-%d", f.idPrefix, name, i), Index: uint(i), Count: count, Devmem: m.mem, Devcore: cmp.Or(m.cores, 100),
			Type: m.typ, Numa: i * 2 / ng, Health: r.Intn(20) != 0,
		}
		if f.jsonFormat {
			d.Mode = "hami-core"
		}
		devs = append(devs, d)
	}
	if f.jsonFormat {
		b, _ := json.Marshal(devs)
		n.Annotations[f.register] = string(b)
	} else {
		var b strings.Builder
		for _, d := range devs {
			fmt.Fprintf(&b, "%s,%d,%d,%d,%s,%d,%v:", d.ID, d.Count, d.Devmem, d.Devcore, d.Type, d.Numa, d.Health)
		}
		n.Annotations[f.register] = b.String()
	}
	alloc := int64(ng) * int64(count)
	if f.capacityHealth {
		alloc = int64(ng)
	}
	if r.Intn(20) == 0 && !coreOnly {
		alloc = 0 // the device plugin is gone
	}
	n.Status.Allocatable[corev1.ResourceName(f.countRes)] = *resource.NewQuantity(alloc, resource.DecimalSI)
	n.Status.Capacity[corev1.ResourceName(f.countRes)] = *resource.NewQuantity(alloc, resource.DecimalSI)
	return n
}

// handshake: NVIDIA's node side writes nothing since v2.8 and the scheduler stamps every node it lists at its
// first registration pass, so in a running cluster the stamp is old. The other families' device plugins write
// "Reported <time>" every 30 s and the scheduler answers Requesting_<time>; a scheduler that starts on an old
// Requesting_ never registers the node (CheckHealth: healthy, no update; pkg/device/devices.go:576-596), so
// the running cluster's state a fresh scheduler sees is a recent Reported.
func (f *devFamily) handshake(*corev1.Node) (string, string) {
	if f.reported {
		return f.handshakeKey, "Reported " + time.Now().Add(-10*time.Second).Format(time.DateTime)
	}
	return f.handshakeKey, "Requesting_" + time.Now().Add(-time.Hour).Format(time.DateTime)
}

func (f *devFamily) nodeDevs(n *corev1.Node) []regDev {
	if f.capCores != "" {
		q, ok := n.Status.Capacity[corev1.ResourceName(f.capCores)]
		if !ok || q.Value() == 0 {
			return nil
		}
		cards := q.Value()
		mq := n.Status.Capacity[corev1.ResourceName(f.capMem)]
		var devs []regDev
		for i := int64(0); i*100 < cards; i++ {
			devs = append(devs, regDev{ID: fmt.Sprintf("%s-%s-%d", n.Name, f.capName, i), Index: uint(i), Count: 100,
				Devmem: int32(mq.Value() * f.memUnit * 100 / cards), Devcore: 100, Type: f.capType, Health: true})
		}
		return devs
	}
	v := n.Annotations[f.register]
	if v == "" {
		return nil
	}
	var devs []regDev
	if f.jsonFormat {
		_ = json.Unmarshal([]byte(v), &devs)
		return devs
	}
	for _, s := range strings.Split(v, ":") {
		x := strings.Split(s, ",")
		if len(x) < 7 {
			continue
		}
		var d regDev
		d.ID, d.Type = x[0], x[4]
		fmt.Sscan(x[1], &d.Count)
		fmt.Sscan(x[2], &d.Devmem)
		fmt.Sscan(x[3], &d.Devcore)
		devs = append(devs, d)
	}
	return devs
}

type devUse struct{ slots, mem, cores int64 }

// use sums what pods on node hold per device, as HAMi counts it (one slot per occurrence).
func (f *devFamily) use(node string, pods []*corev1.Pod) map[string]*devUse {
	use := map[string]*devUse{}
	for _, p := range pods {
		if p.Spec.NodeName != node {
			continue
		}
		for _, c := range strings.Split(p.Annotations[f.allocated], ";") {
			for _, d := range strings.Split(c, ":") {
				x := strings.Split(d, ",")
				if len(x) < 4 || x[0] == "" {
					continue
				}
				u := use[x[0]]
				if u == nil {
					u = &devUse{}
					use[x[0]] = u
				}
				var m, k int64
				fmt.Sscan(x[2], &m)
				fmt.Sscan(x[3], &k)
				u.slots++
				u.mem += m
				u.cores += k
			}
		}
	}
	return use
}

func (f *devFamily) running(r *rand.Rand, n *corev1.Node, existing []*corev1.Pod, ns string, i int, overcommit bool) []*corev1.Pod {
	devs := f.nodeDevs(n)
	if len(devs) == 0 {
		return nil
	}
	use := f.use(n.Name, existing)
	for _, d := range devs {
		if use[d.ID] == nil {
			use[d.ID] = &devUse{}
		}
	}
	p := basePod(ns, fmt.Sprintf("run-%d", i))
	p.Spec.NodeName = n.Name
	p.Spec.SchedulerName = "hami-scheduler"
	p.Status.Phase = corev1.PodRunning
	nc := 1
	if r.Intn(5) == 0 {
		nc = 2
	}
	var entries []string
	for c := 0; c < nc; c++ {
		k := 1
		if r.Intn(4) == 0 && len(devs) > 1 {
			k = 2
		}
		mem := int64(1024 * (1 + r.Intn(12)))
		cores := int64(pick(r, []int{0, 0, 10, 25, 50, 100}))
		var perm []int
		for _, d := range r.Perm(len(devs)) {
			u := use[devs[d].ID]
			if len(perm) < k && (overcommit || (u.slots < int64(devs[d].Count) && u.mem+mem <= int64(devs[d].Devmem) && u.cores+cores <= int64(devs[d].Devcore))) {
				perm = append(perm, d)
			}
		}
		if len(perm) < k {
			continue
		}
		var parts []string
		for _, d := range perm {
			u := use[devs[d].ID]
			u.slots++
			u.mem += mem
			u.cores += cores
			parts = append(parts, fmt.Sprintf("%s,%s,%d,%d:", devs[d].ID, f.vendor, mem, cores))
		}
		entries = append(entries, strings.Join(parts, "")+";")
		lim := map[string]int64{f.countRes: int64(k), f.memRes: mem / f.unit()}
		if cores > 0 {
			lim[f.coresRes] = cores
		}
		p.Spec.Containers = append(p.Spec.Containers, container(fmt.Sprintf("c%d", c), lim))
	}
	if len(entries) == 0 {
		return nil
	}
	p.Annotations["hami.io/vgpu-node"] = n.Name
	p.Annotations["hami.io/vgpu-time"] = "1790000000"
	p.Annotations[f.allocated] = strings.Join(entries, "")
	p.Annotations[f.toAllocate] = strings.Repeat(";", len(entries))
	p.Annotations["hami.io/bind-phase"] = "success"
	return []*corev1.Pod{p}
}

func (f *devFamily) pending(r *rand.Rand, nodes []*corev1.Node) *corev1.Pod {
	p := basePod(pick(r, []string{"default", "team-a"}), "pending")
	gpuContainer := func(name string) corev1.Container {
		lim := map[string]int64{f.countRes: int64(pick(r, []int{1, 1, 1, 2, 2, 3, 4}))}
		switch x := r.Intn(20); {
		case x < 8:
			lim[f.memRes] = int64(pick(r, []int{1024, 2048, 4000, 8192, 16384, 30000, 50000})) / f.unit()
		case x < 13 && f.pctRes != "":
			lim[f.pctRes] = int64(pick(r, f.pcts))
			if coreOnly {
				lim[f.pctRes] = min(lim[f.pctRes], 100)
			}
		}
		if r.Intn(2) == 0 {
			lim[f.coresRes] = int64(pick(r, []int{10, 25, 50, 100, 150}))
		}
		return container(name, lim)
	}
	switch x := r.Intn(10); {
	case x < 7:
		p.Spec.Containers = []corev1.Container{gpuContainer("main")}
	case x < 9:
		p.Spec.Containers = []corev1.Container{gpuContainer("main"), gpuContainer("second")}
		if r.Intn(3) == 0 {
			p.Spec.Containers[1] = container("sidecar", nil)
		}
	default:
		p.Spec.InitContainers = []corev1.Container{gpuContainer("init")}
		p.Spec.Containers = []corev1.Container{gpuContainer("main")}
	}
	var uuids []string
	for _, n := range nodes {
		for _, d := range f.nodeDevs(n) {
			uuids = append(uuids, d.ID)
		}
	}
	if r.Intn(7) == 0 {
		p.Annotations[f.useType] = pick(r, f.typeWords)
	}
	if r.Intn(10) == 0 {
		p.Annotations[f.noUseType] = pick(r, f.typeWords)
	}
	if r.Intn(10) == 0 && len(uuids) > 0 {
		p.Annotations[f.useUUID] = strings.Join([]string{pick(r, uuids), pick(r, uuids)}, ",")
	}
	if r.Intn(10) == 0 && len(uuids) > 0 {
		p.Annotations[f.noUseUUID] = pick(r, uuids)
	}
	if f.numaBind != "" && r.Intn(10) == 0 {
		p.Annotations[f.numaBind] = "true"
	}
	return p
}

func (f *devFamily) quota(r *rand.Rand, ns string) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gpu-quota"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}},
	}
	if r.Intn(3) != 0 {
		q.Spec.Hard[corev1.ResourceName("limits."+f.memRes)] = *resource.NewQuantity(int64(pick(r, []int{0, 4096, 16384, 40000, 100000})), resource.DecimalSI)
	}
	if r.Intn(2) == 0 {
		q.Spec.Hard[corev1.ResourceName("limits."+f.coresRes)] = *resource.NewQuantity(int64(pick(r, []int{0, 50, 100, 200})), resource.DecimalSI)
	}
	return q
}
