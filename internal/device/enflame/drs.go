package enflame

// Enflame DRS-GCU, HAMi v2.10.0's EnflameDevices (pkg/device/enflame/device.go): GCUs cut into hard
// partitions (DRS slices) by the device plugin, registered in the node annotation enflame.com/gcu-drs-capacity
// with the profiles the node offers; a container asks for one slice of one GCU, by its size in units
// (enflame.com/drs-gcu) or by the memory and cores it must hold (enflame.com/gcu-memory, gcu-core), which Fit
// turns into one of the node's profiles.

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// DRS-GCU's names at v2.10.0 (pkg/device/enflame/device.go:40-57).
const (
	// DRSCapacityAnnotation is the node annotation the device plugin registers its GCUs and profiles in.
	DRSCapacityAnnotation = "enflame.com/gcu-drs-capacity"
	// DRSName is the type's CommonWord and the registered type of its devices.
	DRSName = "Enflame"
	// DRSAllocated is the pod's device list; HAMi writes no to-allocate list for the type.
	DRSAllocated = "hami.io/enflame-vgpu-devices-allocated"

	PodRequestGCUSize  = "enflame.com/gcu-request-size"
	PodAssignedGCUID   = "enflame.com/gcu-assigned-id"
	PodHasAssignedGCU  = "enflame.com/gcu-assigned"
	PodAssignedGCUIdx  = "enflame.com/gcu-assigned-index"
	PodAssignedGCUMin  = "enflame.com/gcu-assigned-minor"
	PodAssignedGCUTime = "enflame.com/gcu-assigned-time"
	AssignedContainers = "assigned-containers"
)

// drsKind is the DRS-GCU Kind of the enflame section: resourceNameDRSGCU (else the legacy resourceNameVGCU,
// else enflame.com/drs-gcu), resourceNameGCUMemory and resourceNameGCUCore (InitEnflameDevice, device.go:84-107).
func drsKind(count, memory, cores string) device.Kind {
	return device.Kind{
		Vendor: "enflame", Name: DRSName, Word: "GCU",
		Register:     DRSCapacityAnnotation,
		ReadRegister: readDRSRegister,
		ToAllocate:   DRSAllocated, Allocated: DRSAllocated,
		UseUUID: "enflame.com/use-gpuuuid", NoUseUUID: "enflame.com/nouse-gpuuuid",
		Count: count, Memory: memory, Cores: cores,
		ReadRequest: drsRequest,
		Asks:        asksDRS,
		Admit:       admitDRS,
		BindExtra:   drsBindExtra,
		ExtraKeys:   []string{PodHasAssignedGCU, PodAssignedGCUTime, AssignedContainers, PodAssignedGCUIdx, PodAssignedGCUID, PodAssignedGCUMin, PodRequestGCUSize},
		Rows:        []device.Row{ProfileRow},
	}
}

// drsCapacity is the annotation's JSON (drsCapacitySpec, device.go:64-73).
type drsCapacity struct {
	Devices []struct {
		Index    string `json:"index"`
		Minor    string `json:"minor"`
		Capacity any    `json:"capacity"`
	} `json:"devices"`
	Profiles map[string]string `json:"profiles"`
}

// drsNode is a node's DRS-GCU registration as GetNodeDevices reads it (device.go:179-243).
type drsNode struct {
	devices  []codec.DeviceInfo
	minors   map[int]string // a device's minor where it is not its index
	profiles map[string]string
}

// parseDRS reads enflame.com/gcu-drs-capacity as GetNodeDevices does: every GCU with its capacity in slices,
// memory of the largest profile's GB (its largest slice count when no profile names memory) and 100 cores.
// An error refuses the node's whole registration, as HAMi's does.
func parseDRS(node, raw string) (drsNode, error) {
	var spec drsCapacity
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return drsNode{}, fmt.Errorf("failed to parse %s: %w", DRSCapacityAnnotation, err)
	}
	maxSlice, maxMemGB := 0, 0
	for name := range spec.Profiles {
		slice, memGB := parseProfile(name)
		maxSlice, maxMemGB = max(maxSlice, slice), max(maxMemGB, memGB)
	}
	if maxSlice <= 0 {
		return drsNode{}, fmt.Errorf("no valid drs profiles found on node %s", node)
	}
	if maxMemGB <= 0 {
		maxMemGB = maxSlice
	}
	if maxMemGB > math.MaxInt32/1024 {
		return drsNode{}, fmt.Errorf("profile memory %d GB is more than HAMi's device memory holds", maxMemGB)
	}
	out := drsNode{profiles: spec.Profiles}
	for i, d := range spec.Devices {
		index, err := strconv.Atoi(d.Index)
		if err != nil {
			index = i
		}
		capacity, err := drsCapacityOf(d.Capacity)
		if err != nil || capacity <= 0 {
			return drsNode{}, fmt.Errorf("invalid drs capacity on node %s", node)
		}
		if minor := strings.TrimSpace(d.Minor); minor != "" && minor != strconv.Itoa(index) {
			if out.minors == nil {
				out.minors = map[int]string{}
			}
			out.minors[index] = minor
		}
		out.devices = append(out.devices, codec.DeviceInfo{ID: fmt.Sprintf("%s-enflame-drs-%d", node, index), Index: index,
			Count: capacity, Devmem: int64(maxMemGB) * 1024, Devcore: 100, Type: DRSName, Health: true})
	}
	if len(out.devices) == 0 {
		return drsNode{}, fmt.Errorf("no drs devices found on node %s", node)
	}
	return out, nil
}

// drsCapacityOf is parseDRSCapacity (device.go:643-665): a JSON number (truncated) or a decimal string.
func drsCapacityOf(raw any) (int32, error) {
	switch v := raw.(type) {
	case float64:
		if math.IsNaN(v) || v > math.MaxInt32 || v < math.MinInt32 {
			return 0, fmt.Errorf("invalid capacity value: %v", v)
		}
		return int32(v), nil
	case string:
		c, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, err
		}
		return int32(min(max(c, math.MinInt32), math.MaxInt32)), nil
	}
	return 0, fmt.Errorf("unknown capacity type: %T", raw)
}

// parseProfile is a profile name's slice count and memory in GB ("3g.20gb": 3, 20; device.go:608-627).
func parseProfile(name string) (int, int) {
	parts := strings.Split(strings.ToLower(strings.TrimSpace(name)), ".")
	if len(parts) < 2 {
		return 0, 0
	}
	size, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(parts[0]), "g"))
	if err != nil {
		return 0, 0
	}
	memGB, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(parts[1]), "gb"))
	if err != nil {
		return size, 0
	}
	return size, memGB
}

// readDRSRegister is the Kind's register reader: no annotation, no registration; an unreadable one is a
// problem naming it, and the node registers no DRS-GCU.
func readDRSRegister(k *device.Kind, n *corev1.Node, bad device.Report) (device.Registration, bool) {
	raw, ok := n.Annotations[DRSCapacityAnnotation]
	if !ok {
		return device.Registration{}, false
	}
	field := "metadata.annotations[" + DRSCapacityAnnotation + "]"
	d, err := parseDRS(n.Name, raw)
	if err != nil {
		bad.Report(field, "%v; its DRS GCUs are not counted", err)
		return device.Registration{Field: field}, false
	}
	return device.Registration{Devices: d.devices, Field: field}, true
}

// asksDRS: a container asks for a DRS slice when it names the slice count, the memory or the cores resource.
func asksDRS(k *device.Kind, r *device.Reading) bool {
	return r.Names(k.Count) || r.Names(k.Memory) || r.Names(k.Cores)
}

// drsRequest is GenerateResourceRequests (device.go:321-365): one GCU, a slice of the count asked when it is
// a positive integer, else the memory and cores asked, as written, which the profile row matches on each
// node. A value above HAMi's int32 asks for nothing.
func drsRequest(k *device.Kind, r *device.Reading) (device.Ask, bool) {
	if q, _, ok := r.Quantity(k.Count); ok {
		if n, isInt := q.AsInt64(); isInt && n > 0 {
			if n > math.MaxInt32 {
				r.Bad.Report(r.Field(k.Count), "%d slices is more than HAMi reads; the container asks for nothing", n)
				return device.Ask{}, false
			}
			return device.Ask{Count: 1, Profile: &device.Profile{Slices: n}, WebhookMemory: n}, true
		}
	}
	mem, hasMem := r.Value(k.Memory)
	cores, hasCores := r.Value(k.Cores)
	if !hasMem && !hasCores {
		return device.Ask{}, false
	}
	for _, v := range []struct {
		res   string
		value int64
	}{{k.Memory, mem}, {k.Cores, cores}} {
		if v.value > math.MaxInt32 {
			r.Bad.Report(r.Field(v.res), "%d is more than HAMi reads; the container asks for nothing", v.value)
			return device.Ask{}, false
		}
	}
	return device.Ask{Count: 1, Profile: &device.Profile{Memory: mem, Cores: cores}, WebhookMemory: max(mem, 0), WebhookCores: max(cores, 0)}, true
}

// admitDRS is MutateAdmission (device.go:113-177): a slice count must be positive; without one, memory must
// be positive and cores in (0, 100].
func admitDRS(k *device.Kind, c *corev1.Container, _ map[string]string) string {
	value := func(res string) (int64, bool) {
		q, ok := c.Resources.Limits[corev1.ResourceName(res)]
		if !ok {
			q, ok = c.Resources.Requests[corev1.ResourceName(res)]
		}
		return q.Value(), ok
	}
	if n, ok := value(k.Count); ok {
		if n <= 0 {
			return k.Count + " must be greater than 0"
		}
		return ""
	}
	if mem, ok := value(k.Memory); ok && mem <= 0 {
		return k.Memory + " must be greater than 0"
	}
	if cores, ok := value(k.Cores); ok && (cores <= 0 || cores > 100) {
		return k.Cores + " must be in range (0,100]"
	}
	return ""
}

// candidate is one profile of a node as collectDRSProfiles (device.go:557-606) lists it.
type candidate struct {
	name, id    string
	size, memGB int
	corePercent int
}

// candidates are the node's profiles with a size and a memory, smallest first (by size, then memory), each
// with its share of the largest slice as cores (rounded up).
func candidates(profiles map[string]string) []candidate {
	maxSlice := 0
	for name := range profiles {
		size, _ := parseProfile(name)
		maxSlice = max(maxSlice, size)
	}
	if maxSlice <= 0 {
		return nil
	}
	var out []candidate
	for name, id := range profiles {
		size, memGB := parseProfile(name)
		if size <= 0 || memGB <= 0 {
			continue
		}
		out = append(out, candidate{name: name, id: id, size: size, memGB: memGB,
			corePercent: int(math.Ceil(float64(size) * 100 / float64(maxSlice)))})
	}
	// HAMi sorts with sort.Slice on size and memory; profiles equal in both are left in map order there, and
	// here by name, so the answer is one HAMi may give.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.size != b.size {
			return a.size < b.size
		}
		if a.memGB != b.memGB {
			return a.memGB < b.memGB
		}
		return a.name < b.name
	})
	return out
}

// selectProfile is selectProfileByRequest (device.go:499-529): a slice count takes the first profile of that
// size; memory and cores the first profile holding both, memory read as GB unless it is above twice the
// largest profile's, then as MiB rounded up to GB.
func selectProfile(cands []candidate, p *device.Profile) (candidate, bool) {
	if len(cands) == 0 {
		return candidate{}, false
	}
	if p.Slices > 0 {
		for _, c := range cands {
			if int64(c.size) == p.Slices {
				return c, true
			}
		}
		return candidate{}, false
	}
	maxMemGB := cands[len(cands)-1].memGB
	memGB := int(p.Memory)
	switch {
	case p.Memory <= 0:
		memGB = 0
	case int(p.Memory) > maxMemGB*2:
		memGB = int(math.Ceil(float64(p.Memory) / 1024))
	}
	for _, c := range cands {
		if memGB > 0 && c.memGB < memGB || p.Cores > 0 && int64(c.corePercent) < p.Cores {
			continue
		}
		return c, true
	}
	return candidate{}, false
}

// ProfileRow is the profile choice at the top of DRS-GCU's Fit (device.go:389-407): the request becomes a
// profile of the node, whose memory (GB x 1024 MiB) and cores each device is then checked for, and whose size
// the container charges its GCU's slots; a node with no profile for it is "1/N ModeNotFit" before any GCU.
var ProfileRow = device.Row{
	Number: "n3b", Name: "drs-profile", Code: "ModeNotFit", Unresolvable: true,
	Meaning: "Enflame DRS-GCU: a profile of the node's `enflame.com/gcu-drs-capacity` holds the request: the size `enflame.com/drs-gcu` asks, else the smallest with the `gcu-memory` (GB) and `gcu-core` (%) asked",
	Numbers: "the node's profiles",
	Hint:    "ask for a slice size, or memory and cores, that one of the node's profiles holds",
	Say: func(s device.Saying) string {
		return "no DRS profile of these nodes holds the request (e.g. " + s.Where + ": " + s.Detail + ")"
	},
	Resolve: resolveProfile,
}

// resolveProfile is ProfileRow's resolve: a's profile on the node whose annotations are node.
func resolveProfile(node map[string]string, a *device.Ask) device.Outcome {
	p := a.Profile
	if p == nil {
		return device.Outcome{Skip: true}
	}
	d, err := parseDRS("", node[DRSCapacityAnnotation])
	if err != nil {
		return device.Outcome{Fail: true, Detail: "the node's " + DRSCapacityAnnotation + " is unreadable"}
	}
	cands := candidates(d.profiles)
	c, ok := selectProfile(cands, p)
	if !ok {
		return device.Outcome{Fail: true, Detail: "none of " + profileNames(cands) + " holds " + asked(p)}
	}
	p.Name, p.ID, p.Size, p.Minors = c.name, c.id, int64(c.size), d.minors
	a.MemoryMiB, a.MemoryPercent, a.Cores, a.Slots = int64(c.memGB)*1024, 0, int64(c.corePercent), int32(c.size)
	return device.Outcome{}
}

func profileNames(cands []candidate) string {
	if len(cands) == 0 {
		return "no profile"
	}
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = c.name
	}
	return "the profiles " + strings.Join(names, ", ")
}

func asked(p *device.Profile) string {
	if p.Slices > 0 {
		return fmt.Sprintf("%d slices", p.Slices)
	}
	return fmt.Sprintf("%d GB of memory and %d%% cores", p.Memory, p.Cores)
}

// assigned is one container's entry in assigned-containers (assignedContainerInfo, device.go:75-82).
type assigned struct {
	Allocated   bool   `json:"allocated"`
	Request     int32  `json:"request"`
	ProfileID   string `json:"profileID,omitempty"`
	ProfileName string `json:"profileName,omitempty"`
}

// drsBindExtra is PatchAnnotations (device.go:245-296) beside the device list: not yet assigned, the bind's
// time in nanoseconds, each container's profile by container name, and the first container's GCU index,
// minor and slice size.
func drsBindExtra(_ *device.Kind, containers [][]device.Placed, _ map[string]string, now int64) map[string]string {
	out := map[string]string{PodHasAssignedGCU: "false", PodAssignedGCUTime: strconv.FormatInt(now*1e9, 10)}
	byName := map[string]assigned{}
	for _, c := range containers {
		if len(c) == 0 {
			continue
		}
		d := c[0]
		slice := int32(1)
		var name, id string
		if p := d.Profile; p != nil {
			name, id = p.Name, p.ID
			if p.Size > 0 {
				slice = int32(p.Size)
			}
		}
		byName[d.Container] = assigned{Request: slice, ProfileID: id, ProfileName: name}
		if _, ok := out[PodAssignedGCUIdx]; !ok {
			index := strconv.Itoa(d.Index)
			out[PodAssignedGCUIdx], out[PodAssignedGCUID] = index, index
			out[PodAssignedGCUMin] = index
			if d.Profile != nil && d.Profile.Minors[d.Index] != "" {
				out[PodAssignedGCUMin] = d.Profile.Minors[d.Index]
			}
			out[PodRequestGCUSize] = strconv.Itoa(int(slice))
		}
	}
	if b, err := json.Marshal(byName); err == nil && len(byName) > 0 {
		out[AssignedContainers] = string(b)
	}
	return out
}
