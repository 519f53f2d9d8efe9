package engine

// The request reader of the families' types: a container's resources read as the type's
// GenerateResourceRequests and webhook (MutateAdmission) do, with the Kind's hooks.

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

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
		cr, ok = familyRequest(c, k, i+1, path, bad, annos)
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

// familyRequest reads one container's request for a device type other than NVIDIA's, the way the type's
// GenerateResourceRequests and MutateAdmission do (pkg/device/<vendor>/device.go): count, memory (times
// memoryFactor, rounded up to a vNPU template unless hami-core), memory percentage, cores (the type's default
// when unnamed). Values HAMi refuses are reported and replaced by the nearest it accepts.
func familyRequest(c *corev1.Container, k *device.Kind, kind int, path string, bad reportFunc, annos map[string]string) (ContainerRequest, bool) {
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
		in := device.Request{Cores: cores, HasCores: true, Mode: mode(annos, k)}
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
	} // any other count but a multiple of Pair is the family's Mutate refusal (Ascend 910C)
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
		in := device.Request{Count: count, Memory: mem, Cores: cores, HasMemory: hasMem, HasCores: hasCores, Mode: mode(annos, k)}
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
		// A memory no template holds, or a template for several devices, is the family's Mutate refusal.
		if trimmed, tpl, ok := k.Trim(cr.MemoryMiB); ok {
			cr.MemoryMiB, cr.Template = trimmed, tpl
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

// mode is the pod's value of the Kind's ModeAnnotation, for its Mutate.
func mode(annos map[string]string, k *device.Kind) string {
	if k.ModeAnnotation == "" {
		return ""
	}
	return annos[k.ModeAnnotation]
}

// ascendVNPUMode is the pod annotation that asks Ascend for hami-core soft splitting instead of templates.
const ascendVNPUMode = "huawei.com/vnpu-mode"
