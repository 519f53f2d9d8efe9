package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Counts reports whether HAMi counts a pod's GPU usage: it was placed (hami.io/vgpu-node) and has not
// finished. Terminating pods still count, since their processes may still hold GPU memory.
func Counts(pod *corev1.Pod) bool {
	if pod.Annotations[codec.PodNodeAnnotation] == "" {
		return false
	}
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// bindWindow is how long a pod in bind-phase allocating is taken to be in the middle of its bind: HAMi's
// node lock expires after 5 minutes, and no bind that still holds it can take longer.
const bindWindow = 5 * time.Minute

// UnboundHolding says why a pod that HAMi counts holds GPUs on a node it is not bound to, or "" when it is
// bound there, does not count, or is being bound (hami.io/bind-phase allocating, with a hami.io/bind-time
// within the bind window of now; a zero now takes every allocating pod to be in its bind).
func UnboundHolding(pod *corev1.Pod, now time.Time) string {
	if !Counts(pod) {
		return ""
	}
	node := strings.TrimSpace(pod.Annotations[codec.PodNodeAnnotation])
	switch {
	case pod.Spec.NodeName == node:
		return ""
	case pod.Spec.NodeName != "":
		return fmt.Sprintf("it holds GPUs on node %s (%s) but is bound to node %s", node, codec.PodNodeAnnotation, pod.Spec.NodeName)
	}
	phase := pod.Annotations[codec.PodBindPhaseAnnotation]
	if phase == codec.BindPhaseAllocating {
		if now.IsZero() {
			return ""
		}
		if sec, err := strconv.ParseInt(strings.TrimSpace(pod.Annotations[codec.PodBindTimeAnnotation]), 10, 64); err == nil {
			if at := time.Unix(sec, 0); !at.Before(now.Add(-bindWindow)) {
				return ""
			}
		}
	}
	sched := pod.Spec.SchedulerName
	if sched == "" {
		sched = corev1.DefaultSchedulerName
	}
	return fmt.Sprintf("it holds GPUs on node %s (%s) but is bound to no node (%s %q, scheduler %q)", node, codec.PodNodeAnnotation,
		codec.PodBindPhaseAnnotation, phase, sched)
}

// podAllocation reads what a counted pod holds, or nil when it does not count. key is its namespace/name, keys
// are listKeys(kinds).
func podAllocation(pod *corev1.Pod, key string, cfg Config, kinds []device.Kind, keys *listKeyIndex, slab *[]podAllocationBlock) (*PodAllocation, []Problem) {
	if !Counts(pod) {
		return nil, nil
	}
	var probs []Problem
	bad := func(field, format string, args ...any) {
		probs = append(probs, Problem{Kind: "Pod", Object: key, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if cfg.CountBoundOnly {
		if why := UnboundHolding(pod, time.Time{}); why != "" {
			bad("metadata.annotations["+codec.PodNodeAnnotation+"]", "%s; with count-bound-only its GPUs are not counted", why)
			return nil, probs
		}
	}
	var buf [4]deviceList
	lists := deviceLists(pod.Annotations, keys, buf[:0])
	annoKey, raw, ok, main := codec.PodAllocatedAnnotation, "", false, 0
	for _, l := range lists {
		if mainKind(&kinds[l.kind]) {
			main = l.kind
			// Pods placed by very old schedulers carry only the to-allocate list.
			annoKey, raw, ok = l.key, l.raw, true
			break
		}
	}
	blk := newBlock(slab)
	blk.PodAllocation = PodAllocation{Namespace: pod.Namespace, Name: pod.Name, key: key,
		Node: strings.TrimSpace(pod.Annotations[codec.PodNodeAnnotation]), Terminating: pod.DeletionTimestamp != nil}
	if annoKey != codec.PodAllocatedAnnotation {
		blk.rareFields().listKey = annoKey
	}
	alloc := &blk.PodAllocation
	vendor := familyAllocations(pod, cfg, kinds, lists, alloc, bad)
	if !ok && vendor {
		return alloc, probs
	}
	if !ok {
		bad("metadata.annotations["+codec.PodAllocatedAnnotation+"]", "pod is placed on %s but has no device list; it is counted as using nothing", alloc.Node)
		return alloc, probs
	}
	_, _, _, _, read := kinds[main].Readers()
	entries, err := read(annoKey, raw)
	if err != nil {
		bad("metadata.annotations["+annoKey+"]", "%v; the pod is counted as using nothing", err)
		return alloc, probs
	}
	alloc.Containers = append(mapEntries(blk.containers[:0], pod, entries, cfg, kinds), alloc.Containers...)
	alloc.Uses = collapseInto(blk.uses[:0], alloc.Containers)
	if len(alloc.Containers) == 0 { // as before the block: none is nil (the JSON of a pod that holds nothing)
		alloc.Containers = nil
	}
	if len(alloc.Uses) == 0 {
		alloc.Uses = nil
	}
	alloc.QuotaMem, alloc.QuotaCores = quotaUse(alloc.Containers)
	if v, ok := pod.Annotations[codec.PodMigAllocationsAnnotation]; ok && strings.TrimSpace(v) != "" {
		mig, err := codec.ParseMigAllocations(v)
		if err != nil {
			bad("metadata.annotations["+codec.PodMigAllocationsAnnotation+"]", "%v; MIG placements of this pod are not counted", err)
		} else {
			alloc.rareFields().mig = mig
		}
	}
	return alloc, probs
}

// podAllocationBlock is a counted pod's allocation with room for what most pods hold, one container's
// devices and one device's use, so that reading a pod allocates it once (SetPods makes them a chunk at a time,
// bulk.go).
type podAllocationBlock struct {
	PodAllocation
	containers [1]ContainerAllocation
	uses       [1]GPUUse
}

// mapEntries appends to out the device-list entries assigned to containers across HAMi versions: v2.9+ writes
// init then app containers, up to v2.8 app containers only, and v2.10.0 sometimes drops empty entries (#2899),
// in which case the non-empty entries go to the GPU-requesting containers in order.
func mapEntries(out []ContainerAllocation, pod *corev1.Pod, entries codec.PodDevices, cfg Config, kinds []device.Kind) []ContainerAllocation {
	inits, apps := pod.Spec.InitContainers, pod.Spec.Containers
	add := func(name string, init bool, devs codec.ContainerDevices) {
		if len(devs) > 0 {
			out = append(out, ContainerAllocation{Name: name, Init: init, Devices: devs})
		}
	}
	switch len(entries) {
	case len(inits) + len(apps):
		for i, e := range entries {
			if i < len(inits) {
				add(inits[i].Name, true, e)
			} else {
				add(apps[i-len(inits)].Name, false, e)
			}
		}
		return out
	case len(apps):
		for i, e := range entries {
			add(apps[i].Name, false, e)
		}
		return out
	}
	req, _ := parseRequest(pod, cfg, kinds)
	j := 0
	for _, e := range entries {
		if len(e) == 0 {
			continue
		}
		if j < len(req.Containers) {
			add(req.Containers[j].Name, req.Containers[j].Init, e)
		} else {
			add(fmt.Sprintf("entry-%d", j), false, e)
		}
		j++
	}
	return out
}

// collapse turns container allocations into per-GPU use: app containers add up, init containers run one at
// a time, so a GPU holds the larger of the app sum and the biggest init container. Uses keep first-seen order.
// Pods hold a handful of GPUs, so linear searches over small slices beat maps here.
func collapse(containers []ContainerAllocation) []GPUUse { return collapseInto(nil, containers) }

// collapseInto is collapse, its uses appended to out (an empty slice with room, or nil).
func collapseInto(out []GPUUse, containers []ContainerAllocation) []GPUUse {
	var peak, one []GPUUse
	for _, c := range containers {
		if !c.Init {
			for _, d := range c.Devices {
				out = addUse(out, d)
			}
			continue
		}
		one = one[:0]
		for _, d := range c.Devices {
			one = addUse(one, d)
		}
		for _, u := range one {
			k := findUse(peak, u.UUID)
			if k < 0 {
				peak = append(peak, GPUUse{UUID: u.UUID})
				k = len(peak) - 1
			}
			p := &peak[k]
			p.Slots, p.Mem, p.Cores = max(p.Slots, u.Slots), max(p.Mem, u.Mem), max(p.Cores, u.Cores)
			p.mask |= u.mask
		}
	}
	if len(peak) == 0 {
		return out
	}
	// Merge the init peaks in, keeping the order in which GPUs first appear across all containers.
	merged := make([]GPUUse, 0, len(out)+len(peak))
	for _, c := range containers {
		for _, d := range c.Devices {
			if findUse(merged, d.UUID) >= 0 {
				continue
			}
			u := GPUUse{UUID: d.UUID}
			if k := findUse(out, d.UUID); k >= 0 {
				u = out[k]
			}
			if k := findUse(peak, d.UUID); k >= 0 {
				p := peak[k]
				u.Slots, u.Mem, u.Cores = max(u.Slots, p.Slots), max(u.Mem, p.Mem), max(u.Cores, p.Cores)
				u.mask |= p.mask
			}
			merged = append(merged, u)
		}
	}
	return merged
}

func addUse(list []GPUUse, d codec.ContainerDevice) []GPUUse {
	k := findUse(list, d.UUID)
	if k < 0 {
		list = append(list, GPUUse{UUID: d.UUID})
		k = len(list) - 1
	}
	list[k].Slots++
	list[k].Mem += d.UsedMem
	list[k].Cores += d.UsedCores
	list[k].mask |= d.CoreMask
	return list
}

func findUse(list []GPUUse, uuid string) int {
	for i := range list {
		if list[i].UUID == uuid {
			return i
		}
	}
	return -1
}

// quotaUse is what a pod charges its namespace quota. Init containers run one at a time before the app
// containers, so the pod holds at most the larger of the app containers' sum and its biggest init container:
// the same rule the quota gate applies when it fits init containers alone and app containers cumulatively.
func quotaUse(containers []ContainerAllocation) (mem, cores int64) {
	mem, cores, _ = kindQuotaUse(containers, 0, false)
	return mem, cores
}

// kindQuotaUse is quotaUse for the containers of one device type; seen is false when none asks for it. For a
// type whose device list records core masks (device.Kind.CoresMask), HAMi's quota counts the list's number,
// the mask, as cores (countPodDevices, pkg/device/quota.go:97-117): a device's second core alone is 2.
func kindQuotaUse(containers []ContainerAllocation, kind int, masks bool) (mem, cores int64, seen bool) {
	var appMem, appCores, initMem, initCores int64
	for _, c := range containers {
		if int(c.Kind) != kind {
			continue // other types charge their own keys
		}
		seen = true
		var m, k int64
		for _, d := range c.Devices {
			m += d.UsedMem
			if masks {
				k += d.CoreMask
			} else {
				k += d.UsedCores
			}
		}
		if c.Init {
			initMem, initCores = max(initMem, m), max(initCores, k)
		} else {
			appMem, appCores = appMem+m, appCores+k
		}
	}
	return max(appMem, initMem), max(appCores, initCores), seen
}
