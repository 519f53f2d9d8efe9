package engine

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Pod annotations that steer placement.
const (
	AnnoUseGPUType        = "nvidia.com/use-gputype"
	AnnoNoUseGPUType      = "nvidia.com/nouse-gputype"
	AnnoUseGPUUUID        = "nvidia.com/use-gpuuuid"
	AnnoNoUseGPUUUID      = "nvidia.com/nouse-gpuuuid"
	AnnoNumaBind          = "nvidia.com/numa-bind"
	AnnoVGPUMode          = "nvidia.com/vgpu-mode"
	AnnoGPUPolicy         = "hami.io/gpu-scheduler-policy"
	AnnoNodePolicy        = "hami.io/node-scheduler-policy"
	AnnoDeviceScoreWeight = "hami.io/device-scoring-weights"
)

// GPU modes a node registers and a pod may ask for.
const (
	ModeHamiCore = "hami-core"
	ModeMIG      = "mig"
	ModeMPS      = "mps"
)

// ContainerRequest is what one container asks of each of its GPUs.
type ContainerRequest struct {
	Name  string `json:"name"`
	Init  bool   `json:"init,omitempty"`
	Index int    `json:"index"` // position among the init or the app containers
	Count int    `json:"count"`
	// MemoryMiB is an absolute request per GPU, already multiplied by memoryFactor; 0 when MemoryPercent applies.
	MemoryMiB     int64 `json:"memoryMiB,omitempty"`
	MemoryPercent int64 `json:"memoryPercent,omitempty"`
	// MemoryDefaulted is set when the container named no memory and got HAMi's default.
	MemoryDefaulted bool  `json:"memoryDefaulted,omitempty"`
	Cores           int64 `json:"cores"`
	// CoresOfDevice is set when Cores is a percentage of each device's own cores (AMD: compute units).
	CoresOfDevice bool `json:"coresOfDevice,omitempty"`
	// Device is the device type asked for when it is not an NVIDIA GPU (HAMi's CommonWord: "DCU",
	// "Ascend910B3"); Kind is its index in Config.Kinds (0: NVIDIA). Template is the vNPU template the
	// memory was rounded up to.
	Device   string `json:"device,omitempty"`
	Template string `json:"template,omitempty"`
	// Word is what people call one such device (DCU, NPU, MLU); empty for NVIDIA GPUs.
	Word string `json:"word,omitempty"`
	// ByCores is set when the container asked by its type's cores resource alone (AWS Neuron's neuroncore).
	ByCores bool `json:"byCores,omitempty"`
	// coresUnit is the unit of Cores when it is not a percentage (device.Kind.CoresUnit: "NeuronCores").
	coresUnit string
	// webhookMemory is the memory per device HAMi's webhook counts against the quota when MemoryMiB is not it
	// (device.Ask.WebhookMemory); 0 otherwise.
	webhookMemory int64
	// webhookCores are the cores above 100 a container of another family names, which HAMi's webhook counts
	// against the quota as written (GenerateResourceRequests does not clamp them); 0 otherwise.
	webhookCores int64
	// deviceCores, when above 0, are every device's total cores for this container's cores gates in place of
	// the registered ones (device.Ask.DeviceCores: Ascend's hami-core, 100).
	deviceCores int64
	// slots are the slots the container charges each of its devices for the pod's later containers, 0 for one
	// (device.Ask.Slots); profile its request for one of a node's fixed slices (device.Ask.Profile), resolved
	// per node by its type's resolve row. Both are unset for most types.
	slots   int32
	profile *device.Profile
	Kind    int `json:"-"`
}

// slotCharge is the slots the container takes on each device it is given, for the pod's later containers.
func (r *ContainerRequest) slotCharge() int32 { return max(r.slots, 1) }

// DeviceWord is what people call the devices the pod asks for: the type's word when every container asks
// for the same type other than NVIDIA's, else "GPU".
func (r *PodRequest) DeviceWord() string {
	w := ""
	for i := range r.Containers {
		c := &r.Containers[i]
		if c.Word == "" || w != "" && c.Word != w {
			return "GPU"
		}
		w = c.Word
	}
	if w == "" {
		return "GPU"
	}
	return w
}

// MemoryOn is the MiB this request needs on a GPU of totalMiB.
// CoresOn is the cores the request takes on a device of totalCores: the request itself, or for a type whose
// cores resource is a percentage of the device's cores (AMD: compute units), that share of them, at least 1
// and at most all.
func (r *ContainerRequest) CoresOn(totalCores int64) int64 {
	if !r.CoresOfDevice || totalCores <= 0 || r.Cores <= 0 {
		return r.Cores
	}
	return min(max(totalCores*r.Cores/100, 1), totalCores)
}

func (r *ContainerRequest) MemoryOn(totalMiB int64) int64 {
	if r.MemoryMiB > 0 {
		return r.MemoryMiB
	}
	return totalMiB * r.MemoryPercent / 100
}

// MemoryString says the request the way a user wrote it.
func (r ContainerRequest) MemoryString() string {
	switch {
	case r.MemoryMiB > 0:
		return fmt.Sprintf("%d MiB", r.MemoryMiB)
	case r.MemoryPercent <= 0:
		return "no memory" // a type whose devices have none to share (AWS Neuron, Biren)
	}
	return fmt.Sprintf("%d%% of the GPU's memory", r.MemoryPercent)
}

// CoresString is the request's cores as people read them: "30% cores", or in the type's own unit
// ("2 NeuronCores").
func (r ContainerRequest) CoresString() string { return coresText(&r) }

// Weights are the device scoring weights (hami.io/device-scoring-weights).
type Weights struct {
	Slot   float64 `json:"slot"`
	Core   float64 `json:"core"`
	Memory float64 `json:"memory"`
}

// PodRequest is everything about a pod that matters to placement.
type PodRequest struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Containers holds only the containers that ask for GPUs, init containers first, in spec order.
	Containers []ContainerRequest `json:"containers"`
	// InitContainers and AppContainers count every container of the spec, GPU or not.
	InitContainers int `json:"initContainers"`
	AppContainers  int `json:"appContainers"`

	UseTypes   []string `json:"useTypes,omitempty"`
	NoUseTypes []string `json:"noUseTypes,omitempty"`
	UseUUIDs   []string `json:"useUUIDs,omitempty"`
	NoUseUUIDs []string `json:"noUseUUIDs,omitempty"`
	NumaBind   bool     `json:"numaBind,omitempty"`
	Mode       string   `json:"mode,omitempty"`

	GPUPolicy     string  `json:"gpuPolicy"` // binpack | spread
	TopologyAware bool    `json:"topologyAware,omitempty"`
	Mutex         bool    `json:"mutex,omitempty"`
	NodePolicy    string  `json:"nodePolicy"`
	Weights       Weights `json:"weights"`

	// sortPolicy is the GPU policy text HAMi's device sort reads (the annotation, or the configured default):
	// a comma chain or bare "numa" sorts by the chain's keys, a single value by its own rule (score.go).
	// numaBindAnno is nvidia.com/numa-bind alone, which keeps NUMA groups together in that sort.
	sortPolicy   string
	numaBindAnno bool
	// vendorSel are the pod's type and UUID selectors of the device types it asks for beside the configured
	// one (Config's resource names: NVIDIA's), by Kind index, for the explanation's filter text; the walk
	// builds its own for every type (newFitter).
	vendorSel map[int]*selectors
	// annos are the pod's annotations, which the walk's selectors read.
	annos map[string]string
}

// WantsGPU reports whether any container asks for a GPU.
func (r *PodRequest) WantsGPU() bool { return len(r.Containers) > 0 }

// TotalGPUs is the most GPUs the pod holds at once (init containers run one at a time).
func (r *PodRequest) TotalGPUs() int {
	app, init := 0, 0
	for _, c := range r.Containers {
		if c.Init {
			init = max(init, c.Count)
		} else {
			app += c.Count
		}
	}
	return max(app, init)
}

// ParseRequest derives a pod's GPU requests the way HAMi does. Bad values are reported as problems and
// replaced by what HAMi would use, so one typo never hides the rest of the pod.
func ParseRequest(pod *corev1.Pod, cfg Config) (*PodRequest, []Problem) {
	cfg = cfg.normalized()
	return parseRequest(pod, cfg, cfg.Kinds())
}

// parseRequest is ParseRequest with the normalized cfg's Kinds already built (the Cluster keeps them).
func parseRequest(pod *corev1.Pod, cfg Config, kinds []device.Kind) (*PodRequest, []Problem) {
	pr := &PodRequest{
		Namespace:      pod.Namespace,
		Name:           pod.Name,
		InitContainers: len(pod.Spec.InitContainers),
		AppContainers:  len(pod.Spec.Containers),
		GPUPolicy:      cfg.GPUSchedulerPolicy,
		sortPolicy:     cfg.GPUSchedulerPolicy,
		NodePolicy:     cfg.NodeSchedulerPolicy,
		Weights:        Weights{Slot: 1, Core: 1, Memory: 1},
	}
	rd := &podReading{object: pod.Namespace + "/" + pod.Name}
	rd.Annos, rd.Bad = pod.Annotations, rd
	for i := range pod.Spec.InitContainers {
		if cr, ok := rd.anyRequest(&pod.Spec.InitContainers[i], kinds, "spec.initContainers"); ok {
			cr.Init, cr.Index = true, i
			pr.Containers = append(pr.Containers, cr)
		}
	}
	for i := range pod.Spec.Containers {
		if cr, ok := rd.anyRequest(&pod.Spec.Containers[i], kinds, "spec.containers"); ok {
			cr.Index = i
			pr.Containers = append(pr.Containers, cr)
		}
	}
	applyAnnotations(pr, pod.Annotations, rd.Report)
	pr.annos = pod.Annotations
	for i := range pr.Containers {
		if k := pr.Containers[i].Kind; !mainKind(&kinds[k]) && pr.vendorSel[k] == nil {
			if pr.vendorSel == nil {
				pr.vendorSel = map[int]*selectors{}
			}
			pr.vendorSel[k] = newSelectors(&selectors{}, &kinds[k], pod.Annotations, "")
		}
	}
	return pr, rd.probs
}

type reportFunc func(field, format string, args ...any)

// quantityValue reads a quantity as an integer, rounding up fractions as Kubernetes does for counts.
func quantityValue(q resource.Quantity) int64 { return device.QuantityValue(q) }

func applyAnnotations(pr *PodRequest, annos map[string]string, bad reportFunc) {
	pr.UseTypes = splitList(annos[AnnoUseGPUType])
	pr.NoUseTypes = splitList(annos[AnnoNoUseGPUType])
	pr.UseUUIDs = splitList(annos[AnnoUseGPUUUID])
	pr.NoUseUUIDs = splitList(annos[AnnoNoUseGPUUUID])
	if v, ok := annos[AnnoNumaBind]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			bad("metadata.annotations["+AnnoNumaBind+"]", "%q is not a boolean; NUMA binding stays off", v)
		}
		pr.NumaBind = b
		pr.numaBindAnno = b
	}
	if v := strings.TrimSpace(annos[AnnoVGPUMode]); v != "" {
		switch v {
		case ModeHamiCore, ModeMIG, ModeMPS:
			pr.Mode = v
		default:
			bad("metadata.annotations["+AnnoVGPUMode+"]", "unknown mode %q (want hami-core, mig or mps); no GPU can match it", v)
			pr.Mode = v
		}
	}
	if v, ok := annos[AnnoGPUPolicy]; ok {
		known := true
		for _, p := range splitList(v) {
			switch strings.ToLower(p) {
			case PolicyBinpack, PolicySpread:
				pr.GPUPolicy = strings.ToLower(p)
			case PolicyTopologyAware:
				pr.TopologyAware = true
			case PolicyMutex:
				pr.Mutex = true
			case PolicyNuma:
				// A sort key in HAMi v2.10 (lower NUMA node first in its list); only nvidia.com/numa-bind keeps a
				// container on one NUMA node (assertNuma, pkg/device/nvidia/device.go).
			default:
				known = false
				bad("metadata.annotations["+AnnoGPUPolicy+"]", "unknown policy %q is ignored", p)
			}
		}
		if known && strings.TrimSpace(v) != "" {
			pr.sortPolicy = strings.ToLower(strings.TrimSpace(v))
		}
	}
	if v, ok := annos[AnnoNodePolicy]; ok {
		switch p := strings.ToLower(strings.TrimSpace(v)); p {
		case PolicyBinpack, PolicySpread:
			pr.NodePolicy = p
		default:
			bad("metadata.annotations["+AnnoNodePolicy+"]", "unknown node policy %q; using %s", v, pr.NodePolicy)
		}
	}
	if v, ok := annos[AnnoDeviceScoreWeight]; ok {
		w, err := parseWeights(v)
		if err != nil {
			bad("metadata.annotations["+AnnoDeviceScoreWeight+"]", "%v; using slot=1,core=1,memory=1", err)
		} else {
			pr.Weights = w
		}
	}
}

func parseWeights(v string) (Weights, error) {
	w := Weights{Slot: 1, Core: 1, Memory: 1}
	for i, part := range splitList(v) {
		k, val, ok := strings.Cut(part, "=")
		if !ok {
			return w, fmt.Errorf("item %d %q is not key=value", i, part)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || f < 0 {
			return w, fmt.Errorf("item %d %q: weight must be a non-negative number", i, part)
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "slot", "slots":
			w.Slot = f
		case "core", "cores":
			w.Core = f
		case "memory", "mem":
			w.Memory = f
		default:
			return w, fmt.Errorf("item %d: unknown weight %q (want slot, core or memory)", i, k)
		}
	}
	return w, nil
}

// splitList splits a comma list, trimming blanks and dropping empty items.
func splitList(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
