// Package ascend describes Huawei Ascend NPUs as HAMi v2.10 schedules them (pkg/device/ascend/device.go,
// vnpu.go): one Kind per chip of the vnpus section (Ascend910B3, Ascend310P, Ascend910C ...), each with
// its register annotation hami.io/node-register-<CommonWord>, its vNPU templates (a memory request is rounded
// up to a template by HAMi's webhook), the 910C SuperPod rule (devices taken in whole two-NPU modules), and
// the huawei.com/<CommonWord> runtime annotation written at bind.
package ascend

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// VNPUModeAnnotation selects hami-core (soft split, memory not rounded to a template).
const (
	VNPUModeAnnotation = "huawei.com/vnpu-mode"
	VNPUModeHamiCore   = "hami-core"
)

// Family is Huawei Ascend.
type Family struct{}

func (Family) Name() string    { return "ascend" }
func (Family) Section() string { return "vnpus" }

// Config is one chip of the vnpus section.
type Config struct {
	ChipName           string            `json:"chipName"`
	CommonWord         string            `json:"commonWord"`
	ResourceName       string            `json:"resourceName"`
	ResourceMemoryName string            `json:"resourceMemoryName"`
	ResourceCoreName   string            `json:"resourceCoreName"`
	MemoryAllocatable  int64             `json:"memoryAllocatable"`
	MemoryCapacity     int64             `json:"memoryCapacity"`
	MemoryFactor       int64             `json:"memoryFactor"`
	AICore             int64             `json:"aiCore"`
	Templates          []device.Template `json:"templates"`
	SuperPod           bool              `json:"superPod"`
}

func tpl(name string, mem, core int64) device.Template {
	return device.Template{Name: name, Memory: mem, AICore: core}
}

// Defaults are the chips of HAMi v2.10's chart (charts/hami/templates/scheduler/device-configmap.yaml),
// and the plain Ascend910B of the v2.4-v2.6 charts, which older device plugins still register.
var Defaults = []Config{
	{ChipName: "910A", CommonWord: "Ascend910A", MemoryAllocatable: 32768, MemoryCapacity: 32768, AICore: 30,
		Templates: []device.Template{tpl("vir02", 2184, 2), tpl("vir04", 4369, 4), tpl("vir08", 8738, 8), tpl("vir16", 17476, 16)}},
	{ChipName: "910B", CommonWord: "Ascend910B", MemoryAllocatable: 65536, MemoryCapacity: 65536, AICore: 20,
		Templates: []device.Template{tpl("vir05_1c_16g", 16384, 5), tpl("vir10_3c_32g", 32768, 10)}},
	{ChipName: "910B2", CommonWord: "Ascend910B2", MemoryAllocatable: 65536, MemoryCapacity: 65536, AICore: 24,
		Templates: []device.Template{tpl("vir03_1c_8g", 8192, 3), tpl("vir06_1c_16g", 16384, 6), tpl("vir12_3c_32g", 32768, 12)}},
	{ChipName: "910B3", CommonWord: "Ascend910B3", MemoryAllocatable: 65536, MemoryCapacity: 65536, AICore: 20,
		Templates: []device.Template{tpl("vir05_1c_16g", 16384, 5), tpl("vir10_3c_32g", 32768, 10)}},
	{ChipName: "910B4-1", CommonWord: "Ascend910B4-1", MemoryAllocatable: 65536, MemoryCapacity: 65536, AICore: 20,
		Templates: []device.Template{tpl("vir05_1c_16g", 16384, 5), tpl("vir10_3c_32g", 32768, 10)}},
	{ChipName: "910B4", CommonWord: "Ascend910B4", MemoryAllocatable: 32768, MemoryCapacity: 32768, AICore: 20,
		Templates: []device.Template{tpl("vir05_1c_8g", 8192, 5), tpl("vir10_3c_16g", 16384, 10)}},
	{ChipName: "310P3", CommonWord: "Ascend310P", MemoryAllocatable: 21527, MemoryCapacity: 24576, AICore: 8,
		Templates: []device.Template{tpl("vir01", 3072, 1), tpl("vir02", 6144, 2), tpl("vir04", 12288, 4)}},
	{ChipName: "Ascend910", CommonWord: "Ascend910C", MemoryAllocatable: 65536, MemoryCapacity: 65536, AICore: 20, SuperPod: true,
		Templates: []device.Template{tpl("vir05_1c_16g", 16384, 5), tpl("vir10_3c_32g", 32768, 10)}},
}

// Kinds returns one Kind per configured chip.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		// HamiVnpuCore is whether a node without the hami-vnpu-core annotation supports hami-core (the
		// chart's devices.ascend.hamiVnpuCore, false by default).
		HamiVnpuCore bool     `json:"hamiVnpuCore"`
		Configs      []Config `json:"configs"`
	}
	if err := device.Decode("vnpus", section, &s); err != nil {
		return nil, err
	}
	cfgs := s.Configs
	if len(cfgs) == 0 {
		cfgs = Defaults
	}
	out := make([]device.Kind, 0, len(cfgs))
	for _, c := range cfgs {
		k := KindOf(c)
		k.Rows = append(k.Rows, VNPUCoreRow(s.HamiVnpuCore))
		out = append(out, k)
	}
	return out, nil
}

// KindOf is the Kind of one chip.
func KindOf(c Config) device.Kind {
	w := c.CommonWord
	templates := append([]device.Template(nil), c.Templates...)
	sort.SliceStable(templates, func(i, j int) bool { return templates[i].Memory < templates[j].Memory })
	k := device.Kind{
		Vendor: "ascend", Name: w, Word: "NPU",
		Register:   "hami.io/node-register-" + w,
		Handshake:  "hami.io/node-handshake-" + w,
		ToAllocate: "hami.io/" + w + "-devices-to-allocate",
		Allocated:  "hami.io/" + w + "-devices-allocated",
		UseUUID:    "hami.io/use-" + w + "-uuid", NoUseUUID: "hami.io/no-use-" + w + "-uuid",
		Count:             device.Or(c.ResourceName, "huawei.com/"+w),
		Memory:            device.Or(c.ResourceMemoryName, "huawei.com/"+w+"-memory"),
		Cores:             device.Or(c.ResourceCoreName, "huawei.com/"+w+"-core"),
		MemoryFactor:      c.MemoryFactor,
		ModeAnnotation:    VNPUModeAnnotation,
		Templates:         templates,
		MemoryAllocatable: c.MemoryAllocatable,
		MemoryCapacity:    c.MemoryCapacity,
		BindExtra:         runtimeInfo,
		ScoreNode:         scoreNode(w),
		// HAMi judges a chip's request on every NPU whose type contains the chip's word (getNodeResources,
		// pkg/scheduler/score.go:43-52; checkType, pkg/device/ascend/device.go:292-297, compares the request's
		// type with the CommonWord only): Ascend910B4 sees Ascend910B4-1 NPUs, Ascend910B every 910B*.
		Sees:      device.TypeContains(w),
		ExtraKeys: []string{"huawei.com/" + w, "predicate-time"},
	}
	superPod := c.SuperPod && w == "Ascend910C"
	if strings.HasPrefix(w, "Ascend910") && !superPod {
		k.Topology = networkTopology(w) // 910C's modules decide first (computeBestCombination910C): Pair
	}
	read := device.Share{}
	if superPod {
		k.Pair = 2
		read.Count = moduleCount
	}
	if len(templates) > 0 {
		read.Unnamed, read.Round = allocatableMemory, roundToTemplate
	}
	k.ReadRequest = func(k *device.Kind, r *device.Reading) (device.Ask, bool) {
		a, ok := read.Read(k, r)
		if ok && r.Annos[VNPUModeAnnotation] == VNPUModeHamiCore {
			a.DeviceCores = hamiCoreTotal
		}
		return a, ok
	}
	cfg := c
	cfg.ResourceCoreName, cfg.ResourceMemoryName = k.Cores, k.Memory
	k.Mutate = func(r *device.Request) string { return mutate(cfg, superPod, r) }
	return k
}

// hamiCoreTotal is every NPU's total cores for a hami-core pod's cores gates: HAMi's Fit compares -core with
// 100, not with the NPU's AI cores (effectiveTotalCore, pkg/device/ascend/device.go:539-560 at v2.10.0).
const hamiCoreTotal = 100

// moduleCount is the count a 910C SuperPod container asks for: HAMi's webhook rounds one device up to a
// whole module (Pair); any other count but a multiple of Pair is mutate's refusal.
func moduleCount(k *device.Kind, r *device.Reading) (int64, bool, bool) {
	count, byCores, ok := device.ReadCount(k, r)
	if ok && count == 1 {
		count = int64(k.Pair)
	}
	return count, byCores, ok
}

// allocatableMemory is the memory of a container naming none: HAMi's Ascend webhook writes the whole
// device's allocatable memory into an unset memory limit.
func allocatableMemory(k *device.Kind) int64 { return k.MemoryAllocatable }

// roundToTemplate rounds a memory request up to the chip's templates (HAMi's trimMemory), unless the pod
// asks for hami-core, which keeps the memory as written. A memory no template holds, or a template for
// several devices, is mutate's refusal.
func roundToTemplate(k *device.Kind, r *device.Reading, mib int64) (int64, string) {
	if r.Annos[VNPUModeAnnotation] == VNPUModeHamiCore {
		return mib, ""
	}
	if trimmed, tpl, ok := k.Trim(mib); ok {
		return trimmed, tpl
	}
	return mib, ""
}

// mutate is HAMi's MutateAdmission for Ascend (pkg/device/ascend/device.go:119-190), whose errors the webhook
// answers as a refusal (pkg/scheduler/webhook.go:88-94), in its order: a 910C SuperPod count other than 1 or
// 2*n; a -core resource without hami-core (the template fixes compute); a memory limit no template nor the
// chip holds; several NPUs with a vNPU template. It rewrites nothing: the engine's request reader rounds
// memory to the template and 910C's one NPU to a module.
func mutate(c Config, superPod bool, r *device.Request) string {
	if superPod && r.Count != 1 && r.Count%2 != 0 {
		return fmt.Sprintf("Ascend910C device request must be 1 or 2*n, got %d", r.Count)
	}
	if r.Mode == VNPUModeHamiCore {
		return "" // hami-core keeps the memory as written and takes -core
	}
	if r.HasCores && r.Cores > 0 {
		return c.ResourceCoreName + " is only supported in hami-core (soft split) mode"
	}
	trimmed := c.MemoryAllocatable
	if r.HasMemory {
		if trimmed = trimMemory(c, r.Memory); trimmed <= 0 {
			return fmt.Sprintf("%s %d is invalid", c.ResourceMemoryName, r.Memory)
		}
	}
	if r.Count > 1 && trimmed != c.MemoryAllocatable {
		return "vNPU not supported for multiple devices"
	}
	return ""
}

// trimMemory is HAMi's (device.go:69-79): the first template, in the configuration's order, that holds m, else
// the chip's allocatable memory up to its capacity, else 0.
func trimMemory(c Config, m int64) int64 {
	for _, t := range c.Templates {
		if m <= t.Memory {
			return t.Memory
		}
	}
	if m <= c.MemoryCapacity {
		return c.MemoryAllocatable
	}
	return 0
}

// runtimeInfo is HAMi's huawei.com/<CommonWord> annotation: a JSON list, one entry per device, that the
// Ascend device plugin reads to cut the vNPU (PatchAnnotations, pkg/device/ascend/device.go).
func runtimeInfo(k *device.Kind, containers [][]device.Placed, podAnnos map[string]string, now int64) map[string]string {
	type info struct {
		UUID   string `json:"UUID,omitempty"`
		Temp   string `json:"temp,omitempty"`
		Memory int64  `json:"memory,omitempty"`
		Core   int64  `json:"core,omitempty"`
	}
	hamiCore := podAnnos[VNPUModeAnnotation] == VNPUModeHamiCore
	list := []info{}
	for _, c := range containers {
		for _, d := range c {
			i := info{UUID: d.UUID, Memory: d.Mem, Core: d.Cores}
			if !hamiCore {
				_, i.Temp, _ = k.Trim(d.Mem)
			}
			list = append(list, i)
		}
	}
	b, _ := json.Marshal(list) // plain strings and integers: cannot fail
	return map[string]string{"huawei.com/" + k.Name: string(b), "predicate-time": strconv.FormatInt(now, 10)}
}
