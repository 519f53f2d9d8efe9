package engine

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// addVendorDevices reads the register annotation of every device type but NVIDIA's (whose annotation
// buildNode reads first) and appends those devices to the node. A node that registers any type is
// registered: a DCU-only node is not "unregistered" because it has no NVIDIA annotation.
func (c *Cluster) addVendorDevices(n *corev1.Node, node *Node, bad reportFunc) {
	for k := 1; k < len(c.kinds); k++ {
		kind := &c.kinds[k]
		var devs []codec.DeviceInfo
		field := "status.capacity[" + kind.Cores + "]"
		if kind.NodeDevices != nil {
			if devs = kind.NodeDevices(n); len(devs) == 0 {
				continue
			}
		} else {
			reg, ok := n.Annotations[kind.Register]
			if !ok {
				continue
			}
			field = "metadata.annotations[" + kind.Register + "]"
			if kind.CountCapacityRegisters && !capacityNonZero(n, kind.Count) {
				bad("status.capacity["+kind.Count+"]", "is 0 or absent: HAMi does not register the node's %ss while the device plugin reports none (its %ss are not counted)", kind.Word, kind.Word)
				continue
			}
			var err error
			parse := codec.ParseDeviceRegister
			if kind.ParseRegister != nil {
				parse = kind.ParseRegister
			}
			if devs, err = parse(kind.Register, reg); err != nil {
				bad(field, "%v; its %ss are not counted", err, kind.Word)
				continue
			}
		}
		if !node.Registered {
			node.Registered, node.RegisterError = true, ""
		}
		for _, d := range devs {
			if _, dup := node.uuidIndex[d.ID]; dup {
				bad(field, "%s %s is registered twice; the second entry is ignored", kind.Word, d.ID)
				continue
			}
			node.uuidIndex[d.ID] = len(node.GPUs)
			node.GPUs = append(node.GPUs, GPU{
				UUID: d.ID, Index: d.Index, Type: d.Type, Numa: d.Numa, Mode: ModeHamiCore, Healthy: d.Health,
				Slots: d.Count, TotalMem: d.Devmem, TotalCores: d.Devcore, reg: len(node.GPUs),
				Device: kind.Name, Kind: uint8(k),
			})
		}
	}
}

// capacityNonZero is HAMi's AMD CheckHealth (pkg/device/amd/device.go:195-206): the node's capacity of res is
// a whole number other than 0; an absent capacity reads as 0.
func capacityNonZero(n *corev1.Node, res string) bool {
	q := n.Status.Capacity[corev1.ResourceName(res)]
	v, ok := q.AsInt64()
	return ok && v != 0
}

// Word is what people call one device of the GPU's type: GPU, DCU, NPU ...
func (c *Cluster) Word(g *GPU) string { return c.kinds[g.Kind].Word }

// anyRequest reads a container's request for an NVIDIA GPU, or else for the first other device type whose
// count resource it names (HAMi turns each container into one request per type; a container asking for two
// types is a mistake, reported, of which the first is kept).
func anyRequest(c *corev1.Container, cfg Config, path string, bad reportFunc, annos map[string]string) (ContainerRequest, bool) {
	cr, ok := containerRequest(c, cfg, path, bad)
	for i := range cfg.Vendors {
		k := &cfg.Vendors[i]
		if byCount, byCores := names(c, k.Count), k.CountFromCores && names(c, k.Cores); !byCount && !byCores {
			continue
		}
		if ok {
			bad(fmt.Sprintf("%s[%s].resources", path, c.Name), "asks for %s and %s; HAMi does not give one container two device types: only the %s is considered",
				kindName(cr, cfg), k.Count, kindName(cr, cfg))
			continue
		}
		cr, ok = vendorRequest(c, k, i+1, path, bad, annos)
	}
	return cr, ok
}

func kindName(cr ContainerRequest, cfg Config) string {
	if cr.Kind == 0 {
		return cfg.ResourceCountName
	}
	return cfg.Vendors[cr.Kind-1].Count
}

// names reports whether the container's limits or requests name the resource.
func names(c *corev1.Container, res string) bool {
	if res == "" {
		return false
	}
	_, l := c.Resources.Limits[corev1.ResourceName(res)]
	_, r := c.Resources.Requests[corev1.ResourceName(res)]
	return l || r
}

// vendorRequest reads one container's request for a device type other than NVIDIA's, the way the type's
// GenerateResourceRequests and MutateAdmission do (pkg/device/<vendor>/device.go): count, memory (times
// memoryFactor, rounded up to a vNPU template unless hami-core), memory percentage, cores (the type's default
// when unnamed). Values HAMi refuses are reported and replaced by the nearest it accepts.
func vendorRequest(c *corev1.Container, k *device.Kind, kind int, path string, bad reportFunc, annos map[string]string) (ContainerRequest, bool) {
	field := func(res string) string { return fmt.Sprintf("%s[%s].resources[%s]", path, c.Name, res) }
	get := func(name string) (int64, bool) {
		if name == "" {
			return 0, false
		}
		_, v, ok := resourceQuantity(c, name, field, bad)
		return v, ok
	}
	count, _ := get(k.Count)
	byCores := false
	if count <= 0 && k.CountFromCores && !names(c, k.Count) && k.Mutate != nil {
		// The container asks by cores alone (AWS Neuron's neuroncore): the webhook turns them into devices.
		cores, _ := get(k.Cores)
		in := device.Request{Cores: cores, HasCores: true}
		if why := k.Mutate(&in); why != "" {
			bad(field(k.Cores), "%s: HAMi's webhook refuses the pod", why)
			return ContainerRequest{}, false
		}
		count, byCores = in.Count, true
	}
	if count <= 0 {
		if count < 0 {
			bad(field(k.Count), "negative %s count %d is ignored", k.Word, count)
		}
		return ContainerRequest{}, false
	}
	if count > maxGPUCount {
		bad(field(k.Count), "%d %ss is more than any node has; clamped to %d", count, k.Word, maxGPUCount)
		count = maxGPUCount
	}
	if k.Pair > 1 && k.PairOneRoundsUp && count == 1 {
		count = int64(k.Pair) // HAMi's webhook: one device is rounded up to a whole module
	} else if k.Pair > 1 && count%int64(k.Pair) != 0 {
		bad(field(k.Count), "%d %ss: %s devices come in modules of %d, so HAMi's webhook refuses any count but 1 or a multiple of %d",
			count, k.Word, k.Name, k.Pair, k.Pair)
	}
	if v, ok := annos[k.QosAnnotation]; ok && k.QosAnnotation != "" && k.QosIndex(annos) < 0 {
		bad("metadata.annotations["+k.QosAnnotation+"]", "%q is not one of %s: HAMi's webhook refuses the pod", v, strings.Join(k.QosPolicies, ", "))
	}
	cr := ContainerRequest{Name: c.Name, Count: int(count), Kind: kind, Device: k.Name, Word: k.Word, ByCores: byCores}
	if k.WholeDevice {
		cr.MemoryPercent, cr.Cores = 100, 100
		return cr, true
	}
	if k.SlotsOnly {
		return cr, true // a slot, no memory, no cores
	}
	mem, hasMem := get(k.Memory)
	pct, hasPct := get(k.MemoryPercent)
	cores, hasCores := get(k.Cores)
	if k.Mutate != nil {
		in := device.Request{Count: count, Memory: mem, Cores: cores, HasMemory: hasMem, HasCores: hasCores}
		if byCores {
			in.Count, in.HasCores = 0, true
		}
		if why := k.Mutate(&in); why != "" {
			bad(field(k.Count), "%s: HAMi's webhook refuses the pod", why)
		}
		cr.coresUnit = k.CoresUnit
		if in.Whole {
			cr.Cores, cr.CoresOfDevice = 100, true // every core of each device
			return cr, true
		}
		mem, cores, hasMem, hasCores = min(in.Memory, maxRequestValue), min(in.Cores, maxRequestValue), in.HasMemory, in.HasCores
	}
	if k.SplitAcrossDevices && count > 1 {
		mem, cores = mem/count, cores/count // HAMi divides the container's total over its devices
	}
	switch {
	case hasMem && mem > 0 && k.MemoryBareFactor && hasUnit(c, k.Memory):
		cr.MemoryMiB = mem / (1 << 20) // bytes, as HAMi's MetaX sGPU reads a quantity with a unit
	case hasMem && mem > 0:
		if f := max(k.MemoryFactor, 1); mem > maxRequestValue/f {
			mem = maxRequestValue
		} else {
			mem *= f
		}
		cr.MemoryMiB = mem
	case hasPct && pct > 0:
		cr.MemoryPercent = min(pct, 100)
	case k.Memory == "" && k.MemoryPercent == "":
		// the type has no memory resource (AWS Neuron): the container asks for none
	case len(k.Templates) > 0:
		// HAMi's Ascend webhook writes the whole device's allocatable memory into an unset memory limit.
		cr.MemoryMiB, cr.MemoryDefaulted = k.MemoryAllocatable, true
	default:
		cr.MemoryPercent, cr.MemoryDefaulted = 100, true
	}
	if hasMem && mem < 0 {
		bad(field(k.Memory), "negative memory %d is ignored", mem)
	}
	if len(k.Templates) > 0 && cr.MemoryMiB > 0 && annos[ascendVNPUMode] != "hami-core" {
		trimmed, tpl, ok := k.Trim(cr.MemoryMiB)
		switch {
		case !ok:
			bad(field(k.Memory), "%d MiB is more than a %s has (%d MiB): HAMi's webhook refuses the pod", cr.MemoryMiB, k.Name, k.MemoryCapacity)
		default:
			cr.MemoryMiB, cr.Template = trimmed, tpl
			if count > 1 && trimmed != k.MemoryAllocatable {
				bad(field(k.Memory), "%d %ss with the %s template: HAMi's webhook refuses vNPUs for more than one device", count, k.Word, tpl)
			}
		}
	}
	if !hasCores {
		cores = k.DefaultCores
	}
	if k.ManyTakeWholeCores && count > 1 {
		cores = 100
	}
	switch {
	case cores < 0:
		bad(field(k.Cores), "negative cores %d are ignored", cores)
		cores = 0
	case cores > 100:
		bad(field(k.Cores), "%d%% is above 100%%: HAMi ignores the container's request", cores)
		cr.webhookCores = cores // the webhook's quota check counts it as written
		cores = 100
	}
	cr.Cores, cr.CoresOfDevice = cores, k.CoresPercentOfDevice
	return cr, true
}

// hasUnit reports whether the container's quantity for res is written with a unit ("16Gi", "1k"), not as a
// bare number: HAMi's MetaX sGPU reads a bare vmemory as GiB and one with a unit as bytes.
func hasUnit(c *corev1.Container, res string) bool {
	q, ok := c.Resources.Limits[corev1.ResourceName(res)]
	if !ok {
		q = c.Resources.Requests[corev1.ResourceName(res)]
	}
	return strings.IndexFunc(q.String(), func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0
}

// ascendVNPUMode is the pod annotation that asks Ascend for hami-core soft splitting instead of templates.
const ascendVNPUMode = "huawei.com/vnpu-mode"

// selectors are a pod's type, mode and UUID selector annotations for one device type, and its QoS policy.
type selectors struct {
	kind                       *device.Kind
	useTypes, noUseTypes       []string // lower case
	rawUseTypes, rawNoUseTypes []string
	useUUIDs, noUseUUIDs       []string
	// mode is the pod's nvidia.com/vgpu-mode for a type with modes (the MIG row: NVIDIA); "" matches any.
	mode string
	qos  int // the pod's QoS policy index; -1: the Kind has none
}

func newSelectors(k *device.Kind, annos map[string]string, mode string) *selectors {
	s := &selectors{kind: k, qos: k.QosIndex(annos), mode: mode}
	if k.UseType != "" {
		s.rawUseTypes = splitList(annos[k.UseType])
		s.rawNoUseTypes = splitList(annos[k.NoUseType])
	}
	for _, t := range s.rawUseTypes {
		s.useTypes = append(s.useTypes, strings.ToLower(t))
	}
	for _, t := range s.rawNoUseTypes {
		s.noUseTypes = append(s.noUseTypes, strings.ToLower(t))
	}
	if k.UseUUID != "" {
		s.useUUIDs = splitList(annos[k.UseUUID])
		s.noUseUUIDs = splitList(annos[k.NoUseUUID])
	}
	return s
}

// typeMatches is HAMi's CheckType (pkg/device/devices.go:719-737; AMD's checkAMDType is the same): the
// device's mode is the pod's vgpu-mode when it names one, a use list, when given, must have an item the type
// contains, and a no-use list, when given, must have none; all apply together; case-insensitive. A type
// without selectors (Ascend, Cambricon) always matches.
func (s *selectors) typeMatches(t, mode string) bool {
	if s == nil {
		return true
	}
	if s.mode != "" && s.mode != mode {
		return false
	}
	if len(s.useTypes) == 0 && len(s.noUseTypes) == 0 {
		return true
	}
	t = strings.ToLower(t)
	return (len(s.useTypes) == 0 || s.typeIn(t, s.useTypes)) && !s.typeIn(t, s.noUseTypes)
}

func (s *selectors) typeIn(t string, list []string) bool {
	for _, u := range list {
		if strings.Contains(t, u) {
			return true
		}
	}
	return false
}

// typeDetail names the mode or the lists a refused type was held against.
func (s *selectors) typeDetail(mode string) string {
	if s.mode != "" && s.mode != mode {
		return "mode " + mode + " is not the vgpu-mode " + s.mode
	}
	use := "type not in " + s.kind.UseType + "=" + strings.Join(s.rawUseTypes, ",")
	noUse := "type in " + s.kind.NoUseType + "=" + strings.Join(s.rawNoUseTypes, ",")
	switch {
	case len(s.useTypes) == 0:
		return noUse
	case len(s.noUseTypes) == 0:
		return use
	}
	return use + ", or " + noUse
}

// uuidMatches is HAMi's CheckUUID (pkg/device/devices.go:693-713): a use list, when given, must name the
// device, and a no-use list, when given, must not; both apply together.
func (s *selectors) uuidMatches(id string) bool {
	if s == nil {
		return true
	}
	return (len(s.useUUIDs) == 0 || contains(s.useUUIDs, id)) && !contains(s.noUseUUIDs, id)
}

// uuidFilterName names the list that refused a device: the use list when the device is not in it, else the
// no-use list.
func (s *selectors) uuidFilterName(id string) string {
	if len(s.useUUIDs) > 0 && !contains(s.useUUIDs, id) {
		return s.kind.UseUUID
	}
	return s.kind.NoUseUUID
}

// pairChoice is HAMi's 910C module rule (computeBestCombination910C, pkg/device/ascend/device.go): of the
// devices that passed every gate, only modules (index / pair) whose every device passed are taken, whole,
// until count devices are chosen. HAMi orders equally full modules by map iteration; kubectl-hami takes
// them in the order the walk found them, so the answer is deterministic.
func pairChoice(n *Node, sel []int, count, pair int) []int {
	byModule := map[int][]int{}
	var order []int
	for _, gi := range sel {
		m := n.GPUs[gi].Index / pair
		if _, ok := byModule[m]; !ok {
			order = append(order, m)
		}
		byModule[m] = append(byModule[m], gi)
	}
	var out []int
	for _, m := range order {
		if len(out) >= count {
			break
		}
		if devs := byModule[m]; len(devs) == pair {
			out = append(out, devs...)
		}
	}
	return out
}

// vendorAllocations reads the device lists of every other type a counted pod carries (hami.io/dcu-devices-
// allocated, hami.io/Ascend910B3-devices-allocated ...) into alloc: containers, and the quota charges of that
// type. It reports whether the pod carries any.
func vendorAllocations(pod *corev1.Pod, cfg Config, kinds []device.Kind, alloc *PodAllocation, bad reportFunc) bool {
	found := false
	for k := 1; k < len(kinds); k++ {
		kind := &kinds[k]
		key := kind.Allocated
		raw, ok := pod.Annotations[key]
		if !ok {
			key = kind.ToAllocate
			if raw, ok = pod.Annotations[key]; !ok {
				continue
			}
		}
		found = true
		if q := kind.QosIndex(pod.Annotations); q >= 0 {
			if alloc.qos == nil {
				alloc.qos = map[int]int{}
			}
			alloc.qos[k] = q
		}
		entries, err := codec.ParsePodDevices(key, raw)
		if err != nil {
			bad("metadata.annotations["+key+"]", "%v; the pod's %ss are counted as unused", err, kind.Word)
			continue
		}
		if kind.CoresMask {
			for _, e := range entries {
				for j := range e {
					e[j].CoreMask = max(e[j].UsedCores, 0)
					e[j].UsedCores = int64(bits.OnesCount64(uint64(e[j].CoreMask)))
				}
			}
		}
		for _, ca := range mapEntries(pod, entries, cfg) {
			ca.Kind, ca.Device = k, kind.Name
			alloc.Containers = append(alloc.Containers, ca)
		}
	}
	if found {
		alloc.Uses = collapse(alloc.Containers)
		alloc.VendorQuota = vendorQuotaUse(alloc.Containers, kinds)
	}
	return found
}

// vendorQuotaUse is what the containers' devices of other types than NVIDIA's charge their types' quota
// keys (memory in MiB, cores in %), by resource name: app containers summed, init containers as their
// largest, as for NVIDIA.
func vendorQuotaUse(containers []ContainerAllocation, kinds []device.Kind) map[string]int64 {
	var out map[string]int64
	for k := 1; k < len(kinds); k++ {
		mem, cores, seen := kindQuotaUse(containers, k)
		if !seen {
			continue
		}
		if out == nil {
			out = map[string]int64{}
		}
		if r := kinds[k].Memory; r != "" {
			out[r] += mem
		}
		if r := kinds[k].Cores; r != "" {
			out[r] += cores
		}
	}
	return out
}

// chargeVendor adds a pod's charges to other types' quota keys unless one would pass maxQuotaUse.
func (u *usage) chargeVendor(q map[string]int64) bool {
	for r, v := range q {
		if v < 0 || v > maxQuotaUse-u.dev[r] {
			return false
		}
	}
	for r, v := range q {
		if u.dev == nil {
			u.dev = map[string]int64{}
		}
		u.dev[r] += v
	}
	return true
}

func (u *usage) unchargeVendor(q map[string]int64) {
	for r, v := range q {
		u.dev[r] -= v
	}
}

// vendorQuotaKeys lists the quota resources of the other device types: memory (MiB) and cores (%).
func (c *Cluster) vendorQuotaKeys() []vendorKey { return c.vkeys }

func vendorQuotaKeys(kinds []device.Kind) []vendorKey {
	var out []vendorKey
	seen := map[string]bool{}
	for k := 1; k < len(kinds); k++ {
		kind := &kinds[k]
		for _, r := range []struct {
			name, unit string
			factor     int64
		}{{kind.Memory, "MiB", max(kind.MemoryFactor, 1)}, {kind.Cores, device.Or(kind.CoresUnit, "%"), 1}} {
			if r.name != "" && !seen[r.name] {
				seen[r.name] = true
				out = append(out, vendorKey{resource: r.name, unit: r.unit, factor: r.factor, word: kind.Word})
			}
		}
	}
	return out
}

type vendorKey struct {
	resource, unit, word string
	factor               int64
}

// inWords rewrites the engine's sentences about GPUs for a pod that asks for another type's devices only:
// "GPU" becomes the type's word (NPU, DCU ...); "vGPU" (the slot) stays.
func inWords(lines []string, word string) []string {
	if word == "GPU" {
		return lines
	}
	r := strings.NewReplacer("vGPU", "vGPU", "GPU", word)
	for i, l := range lines {
		lines[i] = r.Replace(l)
	}
	return lines
}

// deviceSuffix names the device type and template of a container's request, for other types than NVIDIA's.
func deviceSuffix(r *ContainerRequest) string {
	switch {
	case r.Device == "":
		return ""
	case r.Template != "":
		return " (" + r.Device + ", vNPU template " + r.Template + ")"
	}
	return " (" + r.Device + ")"
}

// pluralWords are the kinds' words in the plural, a Check's unit ("GPUs", "NPUs").
func pluralWords(kinds []device.Kind) []string {
	out := make([]string, len(kinds))
	for i := range kinds {
		out[i] = kinds[i].Word + "s"
	}
	return out
}

// selectChoice applies a type's Select rule (Kunlun's interconnect) to the devices that passed every gate:
// it hands Select their Indexes in ascending order and maps its answer back to the node's devices. Devices
// Select names that did not pass are ignored, so a bad rule cannot place on a failing device.
func selectChoice(n *Node, sel []int, count int, choose func([]int, int, string) []int) []int {
	byIndex := make(map[int]int, len(sel))
	idx := make([]int, 0, len(sel))
	for _, gi := range sel {
		i := n.GPUs[gi].Index
		if _, dup := byIndex[i]; !dup {
			byIndex[i] = gi
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	var out []int
	model := ""
	if len(sel) > 0 {
		model = n.GPUs[sel[0]].Type
	}
	for _, i := range choose(idx, count, model) {
		if gi, ok := byIndex[i]; ok && len(out) < count {
			out = append(out, gi)
			delete(byIndex, i)
		}
	}
	return out
}

// coresText says a container's cores per device: "30% cores", or "1 NeuronCores" for a type whose cores
// resource counts cores (device.Kind.CoresUnit); a whole-device request is "100% cores".
func coresText(r *ContainerRequest) string {
	if r.coresUnit != "" && !r.CoresOfDevice {
		return strconv.FormatInt(r.Cores, 10) + " " + r.coresUnit
	}
	return strconv.FormatInt(r.Cores, 10) + "% cores"
}

// coresUnitOf is the unit the pod's containers ask cores in when every one of them counts cores
// (device.Kind.CoresUnit: "NeuronCores"); "" when any asks a percentage.
func coresUnitOf(req *PodRequest) string {
	unit := ""
	for i := range req.Containers {
		u := req.Containers[i].coresUnit
		if u == "" || unit != "" && u != unit {
			return ""
		}
		unit = u
	}
	return unit
}
