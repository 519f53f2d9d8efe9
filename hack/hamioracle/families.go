package main

import (
	"fmt"
	"math/rand"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The families beyond the register-annotation ones of gen.go, each as its HAMi v2.10.0 scheduler reads it
// (pkg/device/<family>/device.go at the tag: GetNodeDevices, the annotation keys, CheckHealth) and as the
// chart's device ConfigMap names its resources.

func init() {
	for _, f := range []family{
		ascendFamily("ascend", "Ascend910A", "Ascend910B2", "Ascend910B3", "Ascend910B4-1", "Ascend910B4"),
		ascendFamily("ascend910c", "Ascend910C"),
		iluvatarFamily(),
		mthreads, metaxGPU, metaxSGPU, kunlunXPU, kunlunVXPU, enflameGCU, enflameDRS, awsNeuron, biren,
		vastai("vastai", false), vastai("vastai-die", true),
	} {
		families[f.name()] = f
	}
	var all []family
	for _, n := range []string{"nvidia", "nvidia", "hygon", "amd", "cambricon", "ascend", "ascend910c", "iluvatar", "mthreads", "metax",
		"metax-sgpu", "kunlun", "kunlun-vxpu", "enflame", "enflame-drs", "awsneuron", "biren", "vastai"} {
		all = append(all, families[n])
	}
	families["mixed-all"] = &chipFamily{fname: "mixed-all", chips: all}
}

// chipFamily is several families (an Ascend or Iluvatar chip each, or whole families): each node one of
// them, the pending pod asking for the family of a node drawn at random (3 in 4) or any family.
type chipFamily struct {
	fname string
	chips []family
}

func (c *chipFamily) name() string { return c.fname }

func (c *chipFamily) label() string { return familyLabel + "." + c.fname }

func (c *chipFamily) of(n *corev1.Node) family {
	for _, f := range c.chips {
		if f.name() == n.Labels[c.label()] {
			return f
		}
	}
	return c.chips[0]
}

func (c *chipFamily) node(r *rand.Rand, name string) *corev1.Node {
	f := pick(r, c.chips)
	n := f.node(r, name)
	n.Labels[c.label()] = f.name()
	return n
}

func (c *chipFamily) handshake(n *corev1.Node) (string, string) { return c.of(n).handshake(n) }

func (c *chipFamily) running(r *rand.Rand, n *corev1.Node, existing []*corev1.Pod, ns string, i int, overcommit bool) []*corev1.Pod {
	return c.of(n).running(r, n, existing, ns, i, overcommit)
}

func (c *chipFamily) pending(r *rand.Rand, nodes []*corev1.Node) *corev1.Pod {
	f := pick(r, c.chips)
	if r.Intn(4) != 0 {
		f = c.of(pick(r, nodes))
	}
	p := f.pending(r, nodes)
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[c.label()] = f.name()
	return p
}

// quota: a chipFamily's quota depends on the pending pod's family; generate asks quotaFor.
func (c *chipFamily) quota(r *rand.Rand, ns string) *corev1.ResourceQuota { return nil }

// quotaFor is a ResourceQuota on the resources of the pending pod's family.
func (c *chipFamily) quotaFor(r *rand.Rand, p *corev1.Pod) *corev1.ResourceQuota {
	for _, f := range c.chips {
		if f.name() != p.Labels[c.label()] {
			continue
		}
		if cf, ok := f.(*chipFamily); ok {
			return cf.quotaFor(r, p)
		}
		return f.quota(r, p.Namespace)
	}
	return nil
}

// hamiFlags are the scheduler flags of every family inside.
func (c *chipFamily) hamiFlags() []string {
	var out []string
	for _, f := range c.chips {
		out = append(out, flagsOf(f)...)
	}
	return out
}

func flagsOf(f family) []string {
	switch x := f.(type) {
	case *spec:
		return x.hamiFlags
	case *chipFamily:
		return x.hamiFlags()
	}
	return nil
}

// ---- Huawei Ascend (pkg/device/ascend/device.go) ----

type ascendChip struct {
	mem, aiCore int32
	templates   []int64
}

var ascendChips = map[string]ascendChip{
	"Ascend910A":    {32768, 30, []int64{2184, 4369, 8738, 17476}},
	"Ascend910B2":   {65536, 24, []int64{8192, 16384, 32768}},
	"Ascend910B3":   {65536, 20, []int64{16384, 32768}},
	"Ascend910B4-1": {65536, 20, []int64{16384, 32768}},
	"Ascend910B4":   {32768, 20, []int64{8192, 16384}},
	"Ascend910C":    {65536, 20, []int64{16384, 32768}},
}

// ascendFamily: one spec per chip (its commonWord): JSON register hami.io/node-register-<word> (the Ascend
// device plugin's DeviceInfo list, type = the word), handshake hami.io/node-handshake-<word>, resources
// huawei.com/<word>, -memory, -core; a node's devices all carry a NetworkID (1 in 3 nodes: HAMi's topology
// path) or none; hami-vnpu-core on the node and huawei.com/vnpu-mode on the pod now and then.
func ascendFamily(name string, words ...string) family {
	var chips []family
	for _, w := range words {
		chips = append(chips, ascendSpec(w))
	}
	return &chipFamily{fname: name, chips: chips}
}

func ascendSpec(w string) *spec {
	c := ascendChips[w]
	reg := "hami.io/node-register-" + w
	is910C := w == "Ascend910C"
	s := &spec{
		fname: w, handshakeKey: "hami.io/node-handshake-" + w, hamiFlags: []string{"enable-ascend"},
		countRes: "huawei.com/" + w, memRes: "huawei.com/" + w + "-memory", coresRes: "huawei.com/" + w + "-core",
		vendor: w, allocated: "hami.io/" + w + "-devices-allocated", toAllocate: "hami.io/" + w + "-devices-to-allocate",
		nums:      []int{1, 1, 1, 2, 2, 4},
		mems:      append([]int64{0, 0, 0, 1000, 5000, 20000, int64(c.mem), int64(c.mem) + 1}, c.templates...),
		cores:     []int{0, 0, 0, 0, 0, 0, 0, 5, 50},
		quotaKeys: []string{"huawei.com/" + w + "-memory", "huawei.com/" + w + "-core"},
		runMem:    func(r *rand.Rand) int64 { return pick(r, append([]int64{int64(c.mem)}, c.templates...)) },
		runCores:  func(r *rand.Rand) int64 { return int64(pick(r, []int{0, 0, int(c.aiCore) / 4, int(c.aiCore) / 2})) },
	}
	if is910C {
		s.nums = []int{1, 1, 2, 2, 3, 4, 4, 8}
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) {
		ng := 1 + r.Intn(8)
		if is910C {
			ng = 2 * (1 + r.Intn(4))
		}
		count := int32(pick(r, []int{4, 7, 1}))
		network := r.Intn(3) == 0
		var devs []regDev
		for i := 0; i < ng; i++ {
			d := regDev{ID: fmt.Sprintf("%s-%s-%d", w, n.Name, i), Index: uint(i), Count: count, Devmem: c.mem,
				Devcore: c.aiCore, Type: w, Health: r.Intn(20) != 0}
			if network {
				d.CustomInfo = map[string]any{"NetworkID": float64(i * 2 / ng)}
			}
			devs = append(devs, d)
		}
		n.Annotations[reg] = jsonRegister(devs)
		setCount(r, n, s.countRes, int64(ng))
	}
	s.devices = func(n *corev1.Node) []regDev { return jsonDevices(n, reg) }
	s.nodeAnnotate = func(r *rand.Rand, n *corev1.Node) {
		if r.Intn(4) == 0 {
			n.Annotations["hami-vnpu-core"] = pick(r, []string{"true", "false"})
		}
	}
	s.annotate = func(r *rand.Rand, p *corev1.Pod, uuids []string) {
		if r.Intn(6) == 0 {
			p.Annotations["huawei.com/vnpu-mode"] = "hami-core"
		}
		uuidSelectors(r, p, uuids, "hami.io/use-"+w+"-uuid", "hami.io/no-use-"+w+"-uuid")
	}
	return s
}

// ---- Iluvatar (pkg/device/iluvatar/device.go): one spec per chip of the chart's iluvatars list ----

func iluvatarFamily() family {
	var chips []family
	for _, w := range []string{"MR-V100", "MR-V50", "BI-V150", "BI-V100"} {
		chips = append(chips, iluvatarSpec(w))
	}
	return &chipFamily{fname: "iluvatar", chips: chips}
}

func iluvatarSpec(w string) *spec {
	reg := "hami.io/node-" + w + "-register"
	s := &spec{
		fname: w, handshakeKey: "hami.io/node-handshake-" + w, hamiFlags: []string{"enable-iluvatar"},
		countRes: "iluvatar.ai/" + w + "-vgpu", memRes: "iluvatar.ai/" + w + ".vMem", coresRes: "iluvatar.ai/" + w + ".vCore",
		memUnit: 256, vendor: w, allocated: "hami.io/" + w + "-devices-allocated", toAllocate: "hami.io/" + w + "-devices-to-allocate",
		nums:      []int{1, 1, 1, 2, 2, 3, 4},
		mems:      []int64{0, 0, 1024, 2048, 4096, 8192, 16384, 30000},
		cores:     []int{0, 0, 10, 25, 50, 100},
		quotaKeys: []string{"iluvatar.ai/" + w + ".vMem", "iluvatar.ai/" + w + ".vCore"},
		runMem:    func(r *rand.Rand) int64 { return int64(256 * 4 * (1 + r.Intn(12))) },
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) {
		ng := 1 + r.Intn(8)
		count := int32(pick(r, []int{16, 16, 4}))
		mem := pick(r, []int32{16384, 32768})
		var b strings.Builder
		for i := 0; i < ng; i++ {
			fmt.Fprintf(&b, "%s-%s-%d,%d,%d,%d,%s,%d,%v:", w, n.Name, i, count, mem, 100, w, i*2/ng, r.Intn(20) != 0)
		}
		n.Annotations[reg] = b.String()
		setCount(r, n, s.countRes, int64(ng)*int64(count))
	}
	s.devices = func(n *corev1.Node) []regDev { return textDevices(n.Annotations[reg]) }
	s.annotate = func(r *rand.Rand, p *corev1.Pod, uuids []string) {
		uuidSelectors(r, p, uuids, "hami.io/use-"+w+"-uuid", "hami.io/no-use-"+w+"-uuid")
	}
	return s
}

func textDevices(v string) []regDev {
	var devs []regDev
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

// capDevices: the devices a capacity-based family's GetNodeDevices makes: per device count, memory and cores,
// named <node><infix><i>.
func capDevices(n *corev1.Node, res, infix string, count, mem, cores int32) []regDev {
	k := capValue(n, res)
	var devs []regDev
	for i := int64(0); i < k; i++ {
		devs = append(devs, regDev{ID: fmt.Sprintf("%s%s%d", n.Name, infix, i), Index: uint(i), Count: count, Devmem: mem, Devcore: cores})
	}
	return devs
}

// ---- Moore Threads (pkg/device/mthreads/device.go): devices from the capacity of sgpu-core (16 per GPU) and
// sgpu-memory (512 MiB units); pods ask mthreads.com/vgpu, sgpu-memory (one of 2-96 units) and sgpu-core ----

var mthreads = func() *spec {
	s := &spec{
		fname: "mthreads", countRes: "mthreads.com/vgpu", memRes: "mthreads.com/sgpu-memory", coresRes: "mthreads.com/sgpu-core",
		memUnit: 512, vendor: "Mthreads", allocated: "hami.io/mthreads-vgpu-devices-allocated", toAllocate: "hami.io/mthreads-vgpu-devices-to-allocate",
		nums:      []int{1, 1, 1, 1, 2},
		mems:      []int64{0, 1024, 2048, 4096, 8192, 16384, 32768, 49152, 1536, 2560},
		cores:     []int{0, 0, 1, 4, 8, 16},
		quotaKeys: []string{"mthreads.com/sgpu-memory", "mthreads.com/sgpu-core"},
		runMem:    func(r *rand.Rand) int64 { return 512 * pick(r, []int64{2, 4, 8, 16, 32}) },
		runCores:  func(r *rand.Rand) int64 { return int64(pick(r, []int{0, 2, 4, 8})) },
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) {
		ng := int64(1 + r.Intn(8))
		setCapacity(n, "mthreads.com/sgpu-core", 16*ng)
		setCapacity(n, "mthreads.com/sgpu-memory", 96*ng)
		setCapacity(n, "mthreads.com/vgpu", 100*ng)
	}
	s.devices = func(n *corev1.Node) []regDev {
		cores := capValue(n, "mthreads.com/sgpu-core")
		if cores == 0 {
			return nil
		}
		mem := capValue(n, "mthreads.com/sgpu-memory")
		var devs []regDev
		for i := int64(0); i*16 < cores; i++ {
			devs = append(devs, regDev{ID: fmt.Sprintf("%s-mthreads-%d", n.Name, i), Index: uint(i), Count: 100,
				Devmem: int32(mem * 512 * 16 / cores), Devcore: 16})
		}
		return devs
	}
	s.annotate = func(r *rand.Rand, p *corev1.Pod, uuids []string) {
		uuidSelectors(r, p, uuids, "mthreads.ai/use-gpuuuid", "mthreads.ai/nouse-gpuuuid")
	}
	return s
}()

// ---- MetaX GPU (pkg/device/metax/device.go): whole GPUs from the capacity of metax-tech.com/gpu ----

var metaxGPU = func() *spec {
	s := &spec{
		fname: "metax", countRes: "metax-tech.com/gpu", vendor: "Metax-GPU", whole: true,
		allocated: "hami.io/metax-gpu-devices-allocated", toAllocate: "hami.io/metax-gpu-devices-to-allocate",
		nums: []int{1, 1, 1, 2, 2, 3, 4, 8}, quotaKeys: []string{"metax-tech.com/gpu"},
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) {
		setCount(r, n, "metax-tech.com/gpu", int64(1+r.Intn(8)))
	}
	s.devices = func(n *corev1.Node) []regDev { return capDevices(n, "metax-tech.com/gpu", "-metax-", 1, 65536, 100) }
	return s
}()

// ---- MetaX sGPU (pkg/device/metax/sdevice.go, protocol.go): metax-tech.com/node-gpu-devices, a JSON list of
// MetaxSDeviceInfo; pods ask metax-tech.com/sgpu, vcore (percent) and vmemory (GiB) ----

var metaxSGPU = func() *spec {
	const reg = "metax-tech.com/node-gpu-devices"
	type sinfo struct {
		UUID              string `json:"uuid"`
		BDF               string `json:"bdf,omitempty"`
		Model             string `json:"model,omitempty"`
		TotalDevCount     int32  `json:"totalDevCount,omitempty"`
		TotalCompute      int32  `json:"totalCompute,omitempty"`
		TotalVRam         int32  `json:"totalVRam,omitempty"`
		AvailableDevCount int32  `json:"availableDevCount,omitempty"`
		AvailableCompute  int32  `json:"availableCompute,omitempty"`
		AvailableVRam     int32  `json:"availableVRam,omitempty"`
		Numa              int32  `json:"numa,omitempty"`
		Healthy           bool   `json:"healthy,omitempty"`
		QosPolicy         string `json:"qosPolicy,omitempty"`
		LinkZone          int32  `json:"linkZone,omitempty"`
	}
	s := &spec{
		fname: "metax-sgpu", countRes: "metax-tech.com/sgpu", memRes: "metax-tech.com/vmemory", coresRes: "metax-tech.com/vcore",
		memUnit: 1024, vendor: "Metax-SGPU", allocated: "hami.io/metax-sgpu-devices-allocated", toAllocate: "hami.io/metax-sgpu-devices-to-allocate",
		nums:      []int{1, 1, 1, 2, 2, 4},
		mems:      []int64{0, 0, 1024, 4096, 8192, 16384, 65536},
		cores:     []int{0, 0, 10, 25, 50, 100},
		quotaKeys: []string{"metax-tech.com/vmemory", "metax-tech.com/vcore"},
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) {
		ng := 1 + r.Intn(8)
		var devs []sinfo
		qos := pick(r, []string{"best-effort", "fixed-share", "burst-share"})
		for i := 0; i < ng; i++ {
			q := qos
			if r.Intn(8) == 0 {
				q = pick(r, []string{"best-effort", "fixed-share", "burst-share"})
			}
			devs = append(devs, sinfo{UUID: fmt.Sprintf("GPU-metax-%s-%d", n.Name, i), BDF: fmt.Sprintf("0000:%02x:00.0", i+1),
				Model: "MXC500", TotalDevCount: 16, TotalCompute: 100, TotalVRam: 65536,
				AvailableDevCount: 16, AvailableCompute: 100, AvailableVRam: 65536,
				Numa: int32(i * 2 / ng), Healthy: r.Intn(20) != 0, QosPolicy: q, LinkZone: int32(1 + i*2/ng)})
		}
		n.Annotations[reg] = jsonRegister(devs)
		setCapacity(n, "metax-tech.com/sgpu", int64(16*ng))
	}
	s.devices = func(n *corev1.Node) []regDev {
		var devs []sinfo
		if err := unmarshal(n.Annotations[reg], &devs); err != nil {
			return nil
		}
		var out []regDev
		for i, d := range devs {
			out = append(out, regDev{ID: d.UUID, Index: uint(i), Count: d.TotalDevCount, Devmem: d.TotalVRam, Devcore: d.TotalCompute})
		}
		return out
	}
	s.annotate = func(r *rand.Rand, p *corev1.Pod, uuids []string) {
		if r.Intn(4) == 0 {
			p.Annotations["metax-tech.com/sgpu-qos-policy"] = pick(r, []string{"best-effort", "fixed-share", "burst-share"})
		}
		uuidSelectors(r, p, uuids, "metax-tech.com/use-gpuuuid", "metax-tech.com/nouse-gpuuuid")
	}
	return s
}()

// ---- Kunlunxin XPU (pkg/device/kunlun/device.go): whole XPUs from the capacity of kunlunxin.com/xpu ----

var kunlunXPU = func() *spec {
	s := &spec{
		fname: "kunlun", countRes: "kunlunxin.com/xpu", vendor: "kunlun", whole: true, allocated: "hami.io/kunlun-allocated",
		nums: []int{1, 1, 1, 2, 2, 4, 4, 8, 3}, quotaKeys: []string{"kunlunxin.com/xpu"},
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) {
		setCapacity(n, "kunlunxin.com/xpu", int64(pick(r, []int{8, 8, 8, 4, 2, 1, 6})))
	}
	s.devices = func(n *corev1.Node) []regDev { return capDevices(n, "kunlunxin.com/xpu", "-kunlun-", 100, 98304, 100) }
	s.annotate = func(r *rand.Rand, p *corev1.Pod, uuids []string) {
		uuidSelectors(r, p, uuids, "baidu.com/use-gpuuuid", "baidu.com/nouse-gpuuuid")
	}
	return s
}()

// ---- Kunlunxin vXPU (pkg/device/kunlun/vdevice.go): JSON register hami.io/node-register-xpu ----

var kunlunVXPU = func() *spec {
	const reg = "hami.io/node-register-xpu"
	s := &spec{
		fname: "kunlun-vxpu", handshakeKey: "hami.io/node-handshake-xpu",
		countRes: "kunlunxin.com/vxpu", memRes: "kunlunxin.com/vxpu-memory",
		vendor: "XPU", allocated: "hami.io/xpu-devices-allocated", toAllocate: "hami.io/xpu-devices-to-allocate",
		nums:      []int{1, 1, 1, 2, 2, 4},
		mems:      []int64{0, 0, 8192, 24576, 30000, 49152, 98304},
		quotaKeys: []string{"kunlunxin.com/vxpu-memory"},
		runMem:    func(r *rand.Rand) int64 { return pick(r, []int64{24576, 49152}) },
		runCores:  func(r *rand.Rand) int64 { return 0 },
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) {
		ng := pick(r, []int{8, 8, 4, 2, 1})
		var devs []regDev
		for i := 0; i < ng; i++ {
			devs = append(devs, regDev{ID: fmt.Sprintf("XPU-%s-%d", n.Name, i), Index: uint(i), Count: int32(pick(r, []int{4, 4, 2})),
				Devmem: 98304, Devcore: 100, Type: "XPU", Numa: i * 2 / ng, Health: r.Intn(20) != 0})
		}
		n.Annotations[reg] = jsonRegister(devs)
		setCount(r, n, "kunlunxin.com/vxpu", int64(4*ng))
	}
	s.devices = func(n *corev1.Node) []regDev { return jsonDevices(n, reg) }
	s.annotate = func(r *rand.Rand, p *corev1.Pod, uuids []string) {
		uuidSelectors(r, p, uuids, "hami.io/use-xpu-uuid", "hami.io/no-use-xpu-uuid")
	}
	return s
}()

// ---- Enflame GCU (pkg/device/enflame/gcu.go): whole GCUs from the capacity of enflame.com/gcu ----

var enflameGCU = func() *spec {
	s := &spec{
		fname: "enflame", countRes: "enflame.com/gcu", vendor: "GCU", whole: true,
		allocated: "hami.io/enflame-gcu-devices-allocated", toAllocate: "hami.io/enflame-gcu-devices-to-allocate",
		nums: []int{1, 1, 1, 2, 2, 4, 8}, quotaKeys: []string{"enflame.com/gcu"},
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) { setCount(r, n, "enflame.com/gcu", int64(1+r.Intn(8))) }
	s.devices = func(n *corev1.Node) []regDev { return capDevices(n, "enflame.com/gcu", "-GCU-", 1, 100, 100) }
	return s
}()

// ---- Enflame DRS-GCU (pkg/device/enflame/device.go): enflame.com/gcu-drs-capacity; pods ask
// enflame.com/drs-gcu (slices) or gcu-memory and gcu-core ----

var enflameDRS = func() *spec {
	const reg = "enflame.com/gcu-drs-capacity"
	s := &spec{
		fname: "enflame-drs", countRes: "enflame.com/drs-gcu", vendor: "Enflame",
		allocated: "hami.io/enflame-vgpu-devices-allocated",
		nums:      []int{1, 1, 2, 3, 6, 7}, quotaKeys: []string{"enflame.com/gcu-memory", "enflame.com/gcu-core"},
		runMem:   func(r *rand.Rand) int64 { return 1024 * pick(r, []int64{6, 20}) },
		runCores: func(r *rand.Rand) int64 { return int64(pick(r, []int{16, 50})) },
	}
	s.limits = func(r *rand.Rand, lim map[string]int64) {
		if r.Intn(3) == 0 {
			delete(lim, "enflame.com/drs-gcu")
			lim["enflame.com/gcu-memory"] = pick(r, []int64{6, 20, 40, 10, 64})
			if r.Intn(2) == 0 {
				lim["enflame.com/gcu-core"] = int64(pick(r, []int{16, 50, 100, 30}))
			}
		}
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) {
		ng := 1 + r.Intn(8)
		var ds []string
		for i := 0; i < ng; i++ {
			ds = append(ds, fmt.Sprintf(`{"index":"%d","minor":"%d","capacity":6}`, i, i))
		}
		n.Annotations[reg] = `{"devices":[` + strings.Join(ds, ",") + `],"profiles":{"1g.6gb":"0","3g.20gb":"1","6g.40gb":"2"}}`
	}
	s.devices = func(n *corev1.Node) []regDev {
		v := n.Annotations[reg]
		if v == "" {
			return nil
		}
		var spec struct {
			Devices []struct {
				Index string `json:"index"`
			} `json:"devices"`
		}
		if err := unmarshal(v, &spec); err != nil {
			return nil
		}
		var out []regDev
		for i, d := range spec.Devices {
			out = append(out, regDev{ID: fmt.Sprintf("%s-enflame-drs-%s", n.Name, d.Index), Index: uint(i), Count: 6, Devmem: 40 * 1024, Devcore: 100})
		}
		return out
	}
	s.annotate = func(r *rand.Rand, p *corev1.Pod, uuids []string) {
		uuidSelectors(r, p, uuids, "enflame.com/use-gpuuuid", "enflame.com/nouse-gpuuuid")
	}
	return s
}()

// ---- AWS Neuron (pkg/device/awsneuron/device.go): devices from the capacity of aws.amazon.com/neuron and
// neuroncore (cores per device = cores / devices, a bitmask of them as devcore); pods ask neuron or
// neuroncore ----

var awsNeuron = func() *spec {
	s := &spec{
		fname: "awsneuron", countRes: "aws.amazon.com/neuron", vendor: "AWSNeuron",
		allocated: "hami.io/aws-neuron-devices-allocated",
		nums:      []int{1, 1, 1, 2, 4}, quotaKeys: []string{"aws.amazon.com/neuron", "aws.amazon.com/neuroncore"},
		runMem:   func(r *rand.Rand) int64 { return 0 },
		runCores: func(r *rand.Rand) int64 { return int64(pick(r, []int{1, 2, 3})) },
	}
	s.limits = func(r *rand.Rand, lim map[string]int64) {
		if r.Intn(2) == 0 {
			delete(lim, "aws.amazon.com/neuron")
			lim["aws.amazon.com/neuroncore"] = int64(pick(r, []int{1, 1, 2, 2, 3, 4}))
		}
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) {
		it := pick(r, []string{"trn1.32xlarge", "inf2.xlarge", "inf2.48xlarge"})
		ng := int64(pick(r, []int{1, 2, 4, 8}))
		n.Labels["node.kubernetes.io/instance-type"] = it
		setCapacity(n, "aws.amazon.com/neuron", ng)
		setCapacity(n, "aws.amazon.com/neuroncore", 2*ng)
	}
	s.devices = func(n *corev1.Node) []regDev { return capDevices(n, "aws.amazon.com/neuron", "-AWSNeuron-", 2, 0, 3) }
	return s
}()

// ---- Biren (pkg/device/biren/device.go): JSON register hami.io/node-biren-register, whole GPUs ----

var biren = func() *spec {
	const reg = "hami.io/node-biren-register"
	s := &spec{
		fname: "biren", handshakeKey: "hami.io/node-handshake-biren", countRes: "birentech.com/gpu", vendor: "Biren", whole: true,
		allocated: "hami.io/Biren-devices-allocated", toAllocate: "hami.io/Biren-devices-to-allocate",
		nums: []int{1, 1, 1, 2, 2, 4, 8}, quotaKeys: []string{"birentech.com/gpu"},
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) {
		ng := 1 + r.Intn(8)
		var devs []regDev
		for i := 0; i < ng; i++ {
			devs = append(devs, regDev{ID: fmt.Sprintf("biren-%s-%d", n.Name, i), Index: uint(i), Count: 1, Devmem: 65536,
				Devcore: 100, Type: "Biren", Numa: i * 2 / ng, Health: r.Intn(20) != 0})
		}
		n.Annotations[reg] = jsonRegister(devs)
		setCount(r, n, "birentech.com/gpu", int64(ng))
	}
	s.devices = func(n *corev1.Node) []regDev { return jsonDevices(n, reg) }
	s.annotate = func(r *rand.Rand, p *corev1.Pod, uuids []string) {
		if r.Intn(8) == 0 {
			p.Annotations["birentech.com/use-biren"] = pick(r, []string{"Biren", "BR106"})
		}
		uuidSelectors(r, p, uuids, "birentech.com/use-gpuuuid", "birentech.com/nouse-gpuuuid")
	}
	return s
}()

// ---- Vastai (pkg/device/vastai/device.go): JSON register hami.io/node-va-register; card mode, or die mode
// (every device's customInfo DeviceStrategy "die" and its card AIC) ----

func vastai(name string, die bool) *spec {
	const reg = "hami.io/node-va-register"
	s := &spec{
		fname: name, handshakeKey: "hami.io/node-handshake-va", countRes: "vastaitech.com/va", vendor: "Vastai", whole: true,
		allocated: "hami.io/Vastai-devices-allocated", toAllocate: "hami.io/Vastai-devices-to-allocate",
		nums: []int{1, 1, 1, 2, 2, 3, 4}, quotaKeys: []string{"vastaitech.com/va"},
	}
	s.publish = func(r *rand.Rand, n *corev1.Node) {
		cards := 1 + r.Intn(4)
		dies := 1
		if die {
			dies = pick(r, []int{2, 4})
		}
		var devs []regDev
		for c := 0; c < cards; c++ {
			for k := 0; k < dies; k++ {
				i := c*dies + k
				d := regDev{ID: fmt.Sprintf("va-%s-%d", n.Name, i), Index: uint(i), Count: 1, Devmem: 16384, Devcore: 100,
					Type: "Vastai", Numa: c * 2 / cards, Health: r.Intn(20) != 0}
				if die {
					d.CustomInfo = map[string]any{"DeviceStrategy": "die", "AIC": fmt.Sprintf("aic-%d", c)}
				} else if r.Intn(2) == 0 {
					d.CustomInfo = map[string]any{"DeviceStrategy": "card"}
				}
				devs = append(devs, d)
			}
		}
		n.Annotations[reg] = jsonRegister(devs)
		setCount(r, n, "vastaitech.com/va", int64(len(devs)))
	}
	s.devices = func(n *corev1.Node) []regDev { return jsonDevices(n, reg) }
	s.annotate = func(r *rand.Rand, p *corev1.Pod, uuids []string) {
		uuidSelectors(r, p, uuids, "vastaitech.com/use-gpuuuid", "vastaitech.com/nouse-gpuuuid")
		// Die mode's mutex policy takes a card whole (device.go:236-287); card mode's draws stay as they were.
		if die && r.Intn(4) == 0 {
			p.Annotations["hami.io/gpu-scheduler-policy"] = "mutex"
		}
	}
	return s
}
