package engine

// The allocation reader of the families' types: a counted pod's device-list annotations, and what they charge
// the types' quota keys.

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// familyAllocations reads the device lists of every other type a counted pod carries (hami.io/dcu-devices-
// allocated, hami.io/Ascend910B3-devices-allocated ...) into alloc: containers, and the quota charges of that
// type. It reports whether the pod carries any.
func familyAllocations(pod *corev1.Pod, cfg Config, kinds []device.Kind, alloc *PodAllocation, bad reportFunc) bool {
	found := false
	for k := range kinds {
		kind := &kinds[k]
		if mainKind(kind) {
			continue
		}
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
		_, _, _, _, read := kind.Readers()
		entries, err := read(key, raw)
		if err != nil {
			bad("metadata.annotations["+key+"]", "%v; the pod's %ss are counted as unused", err, kind.Word)
			continue
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
	for k := range kinds {
		if mainKind(&kinds[k]) {
			continue
		}
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
	for k := range kinds {
		kind := &kinds[k]
		if mainKind(kind) {
			continue
		}
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
