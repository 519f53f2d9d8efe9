package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// spec is a family described by hooks: how its device plugin publishes the devices (a register annotation in
// one of HAMi's formats, or the node's capacity), what a pod asks for, and how HAMi records a running pod's
// devices. The generic parts (running pods that fit, pending pods, quotas) are shared; see families.go for the
// families themselves.
type spec struct {
	fname string
	// publish draws a node's devices and writes them where the family's device plugin writes them.
	publish func(r *rand.Rand, n *corev1.Node)
	// devices reads the node's devices back as HAMi's GetNodeDevices does (ID, count, memory, cores).
	devices func(n *corev1.Node) []regDev
	// handshakeKey: the device plugin's handshake annotation ("" for families without one); HAMi's
	// CheckHealth treats any value without "Requesting" as a fresh report.
	handshakeKey string
	// hamiFlags: scheduler flags this family needs (the chart's --enable-ascend, --enable-iluvatar).
	hamiFlags []string

	countRes, memRes, coresRes string
	memUnit                    int64 // MiB per unit of memRes
	vendor                     string
	allocated, toAllocate      string

	nums  []int   // devices asked per container
	mems  []int64 // memory asked, MiB (0: none)
	cores []int   // cores asked (0: none)
	// whole: a running pod holds whole devices (the family's pods ask a count only).
	whole bool
	// runCores and runMem: what a running pod's device entry records (default: 1-12 GiB and 0-100 cores).
	runCores func(r *rand.Rand) int64
	runMem   func(r *rand.Rand) int64
	// limits adjusts a pending container's limits (family resources of other shapes).
	limits func(r *rand.Rand, lim map[string]int64)
	// annotate adds the family's pod annotations (selectors, modes); uuids are every device of the cluster.
	annotate func(r *rand.Rand, p *corev1.Pod, uuids []string)
	// runAnnotate adds the family's annotations to a running pod holding devs (per container).
	runAnnotate func(p *corev1.Pod, devs [][]regDev)
	// nodeAnnotate adds node annotations beside the devices (capabilities, topology).
	nodeAnnotate func(r *rand.Rand, n *corev1.Node)
	quotaKeys    []string // limits.<key> a ResourceQuota may set
}

func (s *spec) name() string { return s.fname }

func (s *spec) unit() int64 {
	if s.memUnit == 0 {
		return 1
	}
	return s.memUnit
}

func (s *spec) node(r *rand.Rand, name string) *corev1.Node {
	n := baseNode(name)
	if r.Intn(10) == 0 && !coreOnly {
		return n // a node without the family's devices
	}
	s.publish(r, n)
	if s.nodeAnnotate != nil {
		s.nodeAnnotate(r, n)
	}
	cordon(r, n, s.devices(n))
	return n
}

// cordon sets hami.io/device-cordon (a comma-separated list of device UUIDs) on 1 node in 8: at v2.10.0 only
// NVIDIA's Fit reads it (pkg/device/nvidia/device.go:694-720); the other families place on cordoned devices.
func cordon(r *rand.Rand, n *corev1.Node, devs []regDev) {
	if len(devs) == 0 || r.Intn(8) != 0 {
		return
	}
	ids := []string{pick(r, devs).ID}
	if r.Intn(2) == 0 {
		ids = append(ids, pick(r, devs).ID)
	}
	n.Annotations["hami.io/device-cordon"] = strings.Join(ids, ",")
}

func (s *spec) handshake(n *corev1.Node) (string, string) {
	if s.handshakeKey == "" || len(s.devices(n)) == 0 {
		return "", ""
	}
	return s.handshakeKey, "Reported " + time.Now().Add(-10*time.Second).Format(time.DateTime)
}

// setCount writes the device plugin's count resource (allocatable and capacity); 1 node in 20 has a stopped
// device plugin (0).
func setCount(r *rand.Rand, n *corev1.Node, res string, v int64) {
	if r.Intn(20) == 0 && !coreOnly {
		v = 0
	}
	n.Status.Allocatable[corev1.ResourceName(res)] = *resource.NewQuantity(v, resource.DecimalSI)
	n.Status.Capacity[corev1.ResourceName(res)] = *resource.NewQuantity(v, resource.DecimalSI)
}

func setCapacity(n *corev1.Node, res string, v int64) {
	n.Status.Allocatable[corev1.ResourceName(res)] = *resource.NewQuantity(v, resource.DecimalSI)
	n.Status.Capacity[corev1.ResourceName(res)] = *resource.NewQuantity(v, resource.DecimalSI)
}

func capValue(n *corev1.Node, res string) int64 {
	q, ok := n.Status.Capacity[corev1.ResourceName(res)]
	if !ok {
		return 0
	}
	return q.Value()
}

func jsonRegister[T any](devs []T) string {
	b, _ := json.Marshal(devs)
	return string(b)
}

func unmarshal(v string, x any) error {
	if v == "" {
		return fmt.Errorf("empty")
	}
	return json.Unmarshal([]byte(v), x)
}

func jsonDevices(n *corev1.Node, key string) []regDev {
	var devs []regDev
	if v := n.Annotations[key]; v != "" {
		_ = json.Unmarshal([]byte(v), &devs)
	}
	return devs
}

func (s *spec) use(node string, pods []*corev1.Pod) map[string]*devUse {
	f := &devFamily{allocated: s.allocated}
	return f.use(node, pods)
}

func (s *spec) running(r *rand.Rand, n *corev1.Node, existing []*corev1.Pod, ns string, i int, overcommit bool) []*corev1.Pod {
	devs := s.devices(n)
	if len(devs) == 0 {
		return nil
	}
	use := s.use(n.Name, existing)
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
	var held [][]regDev
	for c := 0; c < nc; c++ {
		k := 1
		if r.Intn(4) == 0 && len(devs) > 1 {
			k = 2
		}
		mem := int64(1024 * (1 + r.Intn(12)))
		cores := int64(pick(r, []int{0, 0, 10, 25, 50, 100}))
		if s.runCores != nil {
			cores = s.runCores(r)
		}
		if s.runMem != nil {
			mem = s.runMem(r)
		}
		var perm []int
		for _, d := range r.Perm(len(devs)) {
			u := use[devs[d].ID]
			m, c := mem, cores
			if s.whole {
				m, c = int64(devs[d].Devmem), int64(devs[d].Devcore)
			}
			if len(perm) < k && (overcommit || (u.slots < int64(devs[d].Count) && u.mem+m <= int64(devs[d].Devmem) && u.cores+c <= int64(devs[d].Devcore))) {
				perm = append(perm, d)
			}
		}
		if len(perm) < k {
			continue
		}
		var parts []string
		var hd []regDev
		for _, d := range perm {
			u := use[devs[d].ID]
			m, c := mem, cores
			if s.whole {
				m, c = int64(devs[d].Devmem), int64(devs[d].Devcore)
			}
			u.slots++
			u.mem += m
			u.cores += c
			parts = append(parts, fmt.Sprintf("%s,%s,%d,%d:", devs[d].ID, s.vendor, m, c))
			hd = append(hd, devs[d])
		}
		held = append(held, hd)
		entries = append(entries, strings.Join(parts, "")+";")
		lim := map[string]int64{s.countRes: int64(k)}
		if s.memRes != "" && !s.whole {
			lim[s.memRes] = mem / s.unit()
		}
		if s.coresRes != "" && cores > 0 && !s.whole {
			lim[s.coresRes] = cores
		}
		p.Spec.Containers = append(p.Spec.Containers, container(fmt.Sprintf("c%d", c), lim))
	}
	if len(entries) == 0 {
		return nil
	}
	p.Annotations["hami.io/vgpu-node"] = n.Name
	p.Annotations["hami.io/vgpu-time"] = "1790000000"
	p.Annotations[s.allocated] = strings.Join(entries, "")
	if s.toAllocate != "" {
		p.Annotations[s.toAllocate] = strings.Repeat(";", len(entries))
	}
	p.Annotations["hami.io/bind-phase"] = "success"
	if s.runAnnotate != nil {
		s.runAnnotate(p, held)
	}
	return []*corev1.Pod{p}
}

func (s *spec) pending(r *rand.Rand, nodes []*corev1.Node) *corev1.Pod {
	p := basePod(pick(r, []string{"default", "team-a"}), "pending")
	ctr := func(name string) corev1.Container {
		lim := map[string]int64{s.countRes: int64(pick(r, s.nums))}
		if s.memRes != "" && len(s.mems) > 0 {
			if m := pick(r, s.mems); m > 0 {
				lim[s.memRes] = max(m/s.unit(), 1)
			}
		}
		if s.coresRes != "" && len(s.cores) > 0 {
			if c := pick(r, s.cores); c > 0 {
				lim[s.coresRes] = int64(c)
			}
		}
		if s.limits != nil {
			s.limits(r, lim)
		}
		return container(name, lim)
	}
	switch x := r.Intn(10); {
	case x < 7:
		p.Spec.Containers = []corev1.Container{ctr("main")}
	case x < 9:
		p.Spec.Containers = []corev1.Container{ctr("main"), ctr("second")}
		if r.Intn(3) == 0 {
			p.Spec.Containers[1] = container("sidecar", nil)
		}
	default:
		p.Spec.InitContainers = []corev1.Container{ctr("init")}
		p.Spec.Containers = []corev1.Container{ctr("main")}
	}
	var uuids []string
	for _, n := range nodes {
		for _, d := range s.devices(n) {
			uuids = append(uuids, d.ID)
		}
	}
	if s.annotate != nil {
		s.annotate(r, p, uuids)
	}
	return p
}

func (s *spec) quota(r *rand.Rand, ns string) *corev1.ResourceQuota {
	if len(s.quotaKeys) == 0 {
		return nil
	}
	q := &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gpu-quota"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}},
	}
	for _, k := range s.quotaKeys {
		if r.Intn(2) != 0 {
			continue
		}
		var v int64
		switch k {
		case s.memRes:
			v = pick(r, []int64{0, 4096, 16384, 40000, 100000}) / s.unit()
		case s.coresRes:
			v = int64(pick(r, []int{0, 50, 100, 200}))
		default:
			v = int64(pick(r, []int{0, 1, 2, 4}))
		}
		q.Spec.Hard[corev1.ResourceName("limits."+k)] = *resource.NewQuantity(v, resource.DecimalSI)
	}
	if len(q.Spec.Hard) == 0 {
		k := s.quotaKeys[0]
		q.Spec.Hard[corev1.ResourceName("limits."+k)] = *resource.NewQuantity(0, resource.DecimalSI)
	}
	return q
}

// uuidSelectors sets the family's use and no-use UUID annotations now and then.
func uuidSelectors(r *rand.Rand, p *corev1.Pod, uuids []string, use, noUse string) {
	if len(uuids) == 0 {
		return
	}
	if use != "" && r.Intn(10) == 0 {
		p.Annotations[use] = strings.Join([]string{pick(r, uuids), pick(r, uuids)}, ",")
	}
	if noUse != "" && r.Intn(10) == 0 {
		p.Annotations[noUse] = pick(r, uuids)
	}
}
