package deviceplugin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// A container placed on GPUs in MIG mode gets MIG instances, not HAMi-core's limits: the scheduler chose a
// profile and a placement per device (hami.io/vgpu-mig-allocations), and Allocate creates the GPU instance at
// that placement with a compute instance over all of it (or takes the one that is already there when no other
// pod holds it), gives the container those MIG devices, and writes their MIG UUID and instance ids back into the
// annotation. Every MigReconcileInterval (and before each MIG Allocate) the instances that no live pod on this
// node holds any more are destroyed, unless a process runs on them. Nothing is kept in memory: after a restart
// the state is NVML's instances and the pods' annotations again.

// migKey names a MIG reservation: the GPU, the profile and the placement.
type migKey struct {
	gpu, profile string
	start, size  int32
}

func keyOf(gpu, profile string, p codec.MigPlacement) migKey {
	return migKey{gpu: gpu, profile: profile, start: p.Start, size: p.Size}
}

func instanceKey(m agent.MigInstance) migKey { return keyOf(m.GPUUUID, m.Profile, m.Placement) }

// migHolds are the MIG reservations of the live pods on this node, with the pods holding them.
type migHolds struct {
	byKey  map[migKey][]string
	byUUID map[string][]string
}

// holders are the pods ("namespace/name") that hold an instance: by its reservation, or by its MIG UUID.
func (h migHolds) holders(m agent.MigInstance) []string {
	out := slices.Clone(h.byKey[instanceKey(m)])
	if m.MigUUID != "" {
		for _, p := range h.byUUID[m.MigUUID] {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// livePod: HAMi counts a pod's MIG reservations while it is neither deleted nor finished.
func livePod(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// listMigHolds reads the MIG reservations of every live pod on this node. Any unreadable annotation is an error:
// destroying instances on a partial view could take one a pod holds.
func (p *Plugin) listMigHolds(ctx context.Context) (migHolds, error) {
	h := migHolds{byKey: map[migKey][]string{}, byUUID: map[string][]string{}}
	list, err := p.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + p.opts.NodeName})
	if err != nil {
		return h, fmt.Errorf("cannot list the node's pods: %w", err)
	}
	for i := range list.Items {
		pod := &list.Items[i]
		raw := pod.Annotations[codec.PodMigAllocationsAnnotation]
		if !livePod(pod) || strings.TrimSpace(raw) == "" {
			continue
		}
		as, err := codec.ParseMigAllocations(raw)
		if err != nil {
			return h, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		name := pod.Namespace + "/" + pod.Name
		for _, a := range as {
			k := keyOf(a.GPUUUID, a.Profile, a.Placement)
			h.byKey[k] = append(h.byKey[k], name)
			if a.MigUUID != "" {
				h.byUUID[a.MigUUID] = append(h.byUUID[a.MigUUID], name)
			}
		}
	}
	return h, nil
}

// registeredMigGPUs are the GPUs this agent registers in MIG mode: the only ones whose instances it touches.
func (p *Plugin) registeredMigGPUs() map[string]bool {
	out := map[string]bool{}
	for _, d := range p.src.Devices() {
		if d.Mode == agent.ModeMIG {
			out[d.ID] = true
		}
	}
	return out
}

// reconcileMig destroys the MIG instances of this node's registered MIG GPUs that no live pod holds, except those
// a process runs on. It returns the holds and the instances left. The caller holds allocMu.
func (p *Plugin) reconcileMig(ctx context.Context) (migHolds, []agent.MigInstance, error) {
	holds, err := p.listMigHolds(ctx)
	if err != nil {
		return holds, nil, err
	}
	insts, err := p.opts.Mig.MigInstances()
	if err != nil {
		return holds, nil, fmt.Errorf("cannot list MIG instances: %w", err)
	}
	gpus := p.registeredMigGPUs()
	kept := insts[:0:0]
	var errs []error
	for _, m := range insts {
		if !gpus[m.GPUUUID] || len(holds.holders(m)) > 0 {
			kept = append(kept, m)
			continue
		}
		if m.Busy {
			p.log.Warn("a MIG instance no pod holds has processes running: it is kept", "gpu", m.GPUUUID, "profile", m.Profile,
				"start", m.Placement.Start, "size", m.Placement.Size, "mig", m.MigUUID)
			kept = append(kept, m)
			continue
		}
		if err := p.opts.Mig.DestroyMigInstance(m); err != nil {
			errs = append(errs, err)
			kept = append(kept, m)
			continue
		}
		p.log.Info("destroyed a MIG instance no pod holds", "gpu", m.GPUUUID, "profile", m.Profile,
			"start", m.Placement.Start, "size", m.Placement.Size, "gpuInstance", m.GPUInstanceID, "mig", m.MigUUID)
	}
	if len(errs) > 0 {
		return holds, kept, fmt.Errorf("cannot destroy MIG instances: %v", errs)
	}
	return holds, kept, nil
}

// migReconcileLoop reconciles until ctx ends; the first pass runs at once, so instances of pods deleted while the
// agent was down go right away.
func (p *Plugin) migReconcileLoop(ctx context.Context) {
	t := time.NewTicker(p.opts.MigReconcileInterval)
	defer t.Stop()
	for {
		p.allocMu.Lock()
		if len(p.registeredMigGPUs()) == 0 {
			// No GPU in MIG mode: nothing to reconcile, and no need to list the pods.
		} else if _, _, err := p.reconcileMig(ctx); err != nil && ctx.Err() == nil {
			// Fail closed: an error destroys nothing more, the next pass tries again.
			p.log.Warn("MIG reconciliation skipped", "err", err)
		}
		p.allocMu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// containerIndex is the container's position among init then app containers (hami.io/vgpu-mig-allocations'
// containerIndex); without a known container, the entry's index.
func containerIndex(pod *corev1.Pod, ctr *corev1.Container, entry int) int {
	if ctr == nil {
		return entry
	}
	for i := range pod.Spec.InitContainers {
		if &pod.Spec.InitContainers[i] == ctr {
			return i
		}
	}
	for i := range pod.Spec.Containers {
		if &pod.Spec.Containers[i] == ctr {
			return len(pod.Spec.InitContainers) + i
		}
	}
	return entry
}

// migTake is the MIG side of one container's Allocate.
type migTake struct {
	value   string              // hami.io/vgpu-mig-allocations with this container's runtime fields
	uuids   []string            // the container's MIG devices, in device order
	created []agent.MigInstance // instances this Allocate created: destroyed again when it fails
}

// realizeMig creates (or takes) the MIG instances of the container's reservations. On error it destroys what it
// created and nothing else. The caller holds allocMu.
func (p *Plugin) realizeMig(ctx context.Context, pod *corev1.Pod, ctr *corev1.Container, t entryTake) (mt migTake, err error) {
	raw, ok := pod.Annotations[codec.PodMigAllocationsAnnotation]
	if !ok || strings.TrimSpace(raw) == "" {
		return mt, fmt.Errorf("GPU %s is in MIG mode but the pod has no %s: the scheduler placed no MIG instance", t.devices[0].UUID, codec.PodMigAllocationsAnnotation)
	}
	as, err := codec.ParseMigAllocations(raw)
	if err != nil {
		return mt, err
	}
	ci := containerIndex(pod, ctr, t.index)
	var mine []int
	for i, a := range as {
		if a.ContainerIndex == ci {
			mine = append(mine, i)
		}
	}
	slices.SortFunc(mine, func(a, b int) int { return as[a].DeviceIndex - as[b].DeviceIndex })
	if len(mine) != len(t.devices) {
		return mt, fmt.Errorf("%s has %d MIG reservations for container %d, but its entry %d of %s has %d GPUs",
			codec.PodMigAllocationsAnnotation, len(mine), ci, t.index, codec.PodToAllocateAnnotation, len(t.devices))
	}
	// Free the slices of pods that are gone first, as HAMi does before every MIG allocation.
	holds, insts, err := p.reconcileMig(ctx)
	if err != nil {
		return mt, fmt.Errorf("MIG reconciliation before allocating: %w", err)
	}
	self := pod.Namespace + "/" + pod.Name
	defer func() {
		if err != nil {
			p.rollbackMig(mt.created)
			mt.created = nil
		}
	}()
	for n, i := range mine {
		a := &as[i]
		if a.GPUUUID != t.devices[n].UUID {
			return mt, fmt.Errorf("MIG reservation %d of %s is on GPU %s but entry %d of %s names GPU %s", a.DeviceIndex,
				codec.PodMigAllocationsAnnotation, a.GPUUUID, t.index, codec.PodToAllocateAnnotation, t.devices[n].UUID)
		}
		want := fmt.Sprintf("MIG placement %s at slices [%d,%d) on GPU %s", a.Profile, a.Placement.Start, a.Placement.Start+a.Placement.Size, a.GPUUUID)
		var inst *agent.MigInstance
		for j := range insts {
			m := &insts[j]
			if m.GPUUUID != a.GPUUUID || !m.Overlaps(a.Placement) {
				continue
			}
			others := slices.DeleteFunc(holds.holders(*m), func(s string) bool { return s == self })
			exact := m.Profile == a.Profile && m.Placement == a.Placement
			switch {
			case exact && len(others) == 0 && (!m.Busy || a.MigUUID != "" && a.MigUUID == m.MigUUID):
				inst = m
			case len(others) > 0:
				return mt, fmt.Errorf("%s conflicts with MIG instance %s at slices [%d,%d) (GPU instance %d) held by pod %s; nothing was destroyed",
					want, m.Profile, m.Placement.Start, m.Placement.Start+m.Placement.Size, m.GPUInstanceID, strings.Join(others, ", "))
			default:
				why := "it could not be destroyed"
				if m.Busy {
					why = "processes run on it"
				}
				return mt, fmt.Errorf("%s conflicts with MIG instance %s at slices [%d,%d) (GPU instance %d) that no other pod holds but %s; nothing was destroyed",
					want, m.Profile, m.Placement.Start, m.Placement.Start+m.Placement.Size, m.GPUInstanceID, why)
			}
		}
		if inst == nil || !inst.HasComputeInstance {
			made, err := p.opts.Mig.CreateMigInstance(a.GPUUUID, a.Profile, a.Placement)
			if err != nil {
				return mt, fmt.Errorf("%s: %w", want, err)
			}
			if inst == nil {
				mt.created = append(mt.created, made)
			}
			insts = append(insts, made)
			inst = &insts[len(insts)-1]
		}
		gi, cid := inst.GPUInstanceID, inst.ComputeInstanceID
		a.MigUUID, a.GPUInstanceID, a.ComputeInstanceID = inst.MigUUID, &gi, &cid
		mt.uuids = append(mt.uuids, inst.MigUUID)
	}
	mt.value = codec.FormatMigAllocations(as)
	return mt, nil
}

// rollbackMig destroys instances created by an Allocate that failed.
func (p *Plugin) rollbackMig(created []agent.MigInstance) {
	for i := len(created) - 1; i >= 0; i-- {
		if err := p.opts.Mig.DestroyMigInstance(created[i]); err != nil {
			p.log.Warn("cannot destroy the MIG instance of a failed Allocate", "mig", created[i].MigUUID, "err", err)
		}
	}
}

// migResponse is what a container on MIG devices gets: the MIG devices and nothing of HAMi-core (HAMi v2.10.0
// gives MIG containers only the device list).
func migResponse(uuids []string) *pluginapi.ContainerAllocateResponse {
	return &pluginapi.ContainerAllocateResponse{Envs: map[string]string{EnvVisibleDevices: strings.Join(uuids, ",")}}
}
