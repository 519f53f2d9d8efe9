package engine

// The allocation reader of the families' types: a counted pod's device-list annotations, and what they charge
// the types' quota keys.

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// listKey is one device-list annotation key of a Kind: its Allocated list, or its ToAllocate list (read
// only when the pod carries no Allocated list of that Kind, as pods placed by very old schedulers do).
type listKey struct {
	kind      int
	allocated bool
}

// listKeyIndex maps every device-list annotation key of the cluster's Kinds to its Kinds, built once per
// cluster, so a pod's annotations are read in one pass whatever the number of families.
type listKeyIndex struct {
	byKey map[string][]listKey
	// lens has a bit for the length of each key shorter than 256: most of a pod's other annotations
	// (hami.io/vgpu-node, hami.io/bind-phase ...) are told apart by their length, without a lookup.
	lens [4]uint64
}

// maybe reports whether an annotation key may be a device-list key.
func (ix *listKeyIndex) maybe(key string) bool {
	n := len(key)
	return n >= 256 || ix.lens[n>>6]&(1<<(n&63)) != 0
}

func listKeys(kinds []device.Kind) listKeyIndex {
	out := listKeyIndex{byKey: map[string][]listKey{}}
	add := func(key string, lk listKey) {
		out.byKey[key] = append(out.byKey[key], lk)
		if n := len(key); n < 256 {
			out.lens[n>>6] |= 1 << (n & 63)
		}
	}
	for k := range kinds {
		add(kinds[k].Allocated, listKey{kind: k, allocated: true})
		if to := kinds[k].ToAllocate; to != kinds[k].Allocated {
			add(to, listKey{kind: k})
		}
	}
	return out
}

// deviceList is the device list a counted pod carries for one Kind.
type deviceList struct {
	kind      int
	key, raw  string
	allocated bool
}

// deviceLists finds a pod's device lists in one pass over its annotations, one per Kind (its Allocated list
// before its ToAllocate list), in Kind order.
func deviceLists(annos map[string]string, keys *listKeyIndex, buf []deviceList) []deviceList {
	out := buf[:0]
	for key, raw := range annos {
		if !keys.maybe(key) {
			continue
		}
		for _, lk := range keys.byKey[key] {
			out = addDeviceList(out, deviceList{kind: lk.kind, key: key, raw: raw, allocated: lk.allocated})
		}
	}
	return out
}

func addDeviceList(out []deviceList, l deviceList) []deviceList {
	i := 0
	for ; i < len(out) && out[i].kind < l.kind; i++ {
	}
	switch {
	case i < len(out) && out[i].kind == l.kind:
		if l.allocated && !out[i].allocated {
			out[i] = l
		}
		return out
	}
	out = append(out, deviceList{})
	copy(out[i+1:], out[i:])
	out[i] = l
	return out
}

// familyAllocations reads the device lists of every other type than the main one a counted pod carries
// (hami.io/dcu-devices-allocated, hami.io/Ascend910B3-devices-allocated ...), each with its family's reader
// (device.Kind.ReadAllocation), into alloc: containers, and the quota charges of that type. It reports
// whether the pod carries any.
func familyAllocations(pod *corev1.Pod, cfg Config, kinds []device.Kind, lists []deviceList, alloc *PodAllocation, bad reportFunc) bool {
	found := false
	for _, l := range lists {
		k, kind := l.kind, &kinds[l.kind]
		if mainKind(kind) {
			continue
		}
		found = true
		if q := kind.QosIndex(pod.Annotations); q >= 0 {
			r := alloc.rareFields()
			if r.qos == nil {
				r.qos = map[int]int{}
			}
			r.qos[k] = q
		}
		_, _, _, _, read := kind.Readers()
		entries, err := read(l.key, l.raw)
		if err != nil {
			bad("metadata.annotations["+l.key+"]", "%v; the pod's %ss are counted as unused", err, kind.Word)
			continue
		}
		from := len(alloc.Containers)
		alloc.Containers = mapEntries(alloc.Containers, pod, entries, cfg, kinds)
		for i := from; i < len(alloc.Containers); i++ {
			alloc.Containers[i].Kind, alloc.Containers[i].Device = int32(k), kind.Name
		}
	}
	if found {
		alloc.Uses = collapse(alloc.Containers)
		alloc.setVendorQuota(vendorQuotaUse(alloc.Containers, kinds))
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
		mem, cores, seen := kindQuotaUse(containers, k, kinds[k].CoresMask)
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
