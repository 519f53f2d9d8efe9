package engine

import (
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// kindRows is a Kind's rows compiled once per cluster (NewCluster), so the walk asks a bool or ranges over a
// short slice instead of reading the Kind: the engine's building blocks the Kind opts into (device.ReadyRow,
// NumaRow, QuotaRow, MIGRow, CordonRow) and the family's own rows, split by where they run. The rows every
// type runs (health, type, uuid, slots, mutex, memory, cores, exclusive, compute) and the cordon (GPU.Cordoned,
// which buildNode sets only for a type with CordonRow) are the walk's straight-line code in checkGPU: one
// compare each per device, no call.
type kindRows struct {
	// cordon: the type reads hami.io/device-cordon (buildNode marks only its devices Cordoned).
	ready, numa, quota, mig, cordon bool
	// unhealthy is the health gate's code: CardNotHealth, or the Kind's UnhealthyCode.
	unhealthy Code
	// unslotted: the type's Fit never checks a device's free slots (device.Kind.Unslotted).
	unslotted bool
	// early run beside the selectors (numbered below 5: MetaX sGPU's qos), late after gate 12 (Mthreads'
	// one-device, Kunlun vXPU's equal-share).
	early, late []*device.Row
	// node are the family's node rows (device.Row.NodeCheck: Ascend's vnpu-core), run once per container of
	// the type after its device count; resolve its resolve rows (device.Row.Resolve: Enflame DRS-GCU's
	// profile), run there too.
	node, resolve []*device.Row
	// otherDetail is the "device" result's text for a device of each Kind (by index) this type's request is
	// not judged on, made once here instead of per device of every node walked.
	otherDetail []string
	// groupCode are the aggregate slots (codeIndex) of the health, slots and memory codes, the groups of a
	// node's facts (nodefacts.go).
	groupCode [3]int
}

func compileRows(kinds []device.Kind) []kindRows {
	out := make([]kindRows, len(kinds))
	for k := range kinds {
		kr := &out[k]
		kr.unhealthy = CardNotHealth
		kr.unslotted = kinds[k].Unslotted
		kr.otherDetail = make([]string, len(kinds))
		for g := range kinds {
			kr.otherDetail[g] = "a " + kinds[g].Word + "; the container asks for " + kinds[k].Word + "s"
		}
		if c := kinds[k].UnhealthyCode; c != "" {
			kr.unhealthy = Code(c)
		}
		kr.groupCode = [3]int{codeIndex(kr.unhealthy), codeIndex(CardTimeSlicingExhausted), codeIndex(CardInsufficientMemory)}
		for i := range kinds[k].Rows {
			r := &kinds[k].Rows[i]
			switch {
			case r.NodeCheck != nil:
				kr.node = append(kr.node, r)
			case r.Resolve != nil:
				kr.resolve = append(kr.resolve, r)
			case r.Check != nil && device.EarlyRow(r):
				kr.early = append(kr.early, r)
			case r.Check != nil:
				kr.late = append(kr.late, r)
			case r.Name == device.ReadyRow.Name:
				kr.ready = true
			case r.Name == device.NumaRow.Name:
				kr.numa = true
			case r.Name == device.QuotaRow.Name:
				kr.quota = true
			case r.Name == device.MIGRow.Name:
				kr.mig = true
			case r.Name == device.CordonRow.Name:
				kr.cordon = true
			}
		}
	}
	return out
}

// readyKind is the first Kind with the devices-ready node gate, whose register annotation and allocatable
// count the node reader reads beside its devices (NVIDIA's); -1 when none has it.
func readyKind(rows []kindRows) int {
	for k := range rows {
		if rows[k].ready {
			return k
		}
	}
	return -1
}

// mainKind reports whether k is the type of HAMi's own device plugin, which registers in
// hami.io/node-nvidia-register (NVIDIA's): its register annotation, device lists and quota keys are read by
// the engine's own readers (buildNode with modes, MIG and the version check; podAllocation; Config's resource
// names), the other types' by the family readers (register.go, kindallocation.go).
func mainKind(k *device.Kind) bool { return k.Register == codec.NodeRegisterAnnotation }

// familyCheck runs one of a family's rows on device gi of n for container r.
func (f *fitter) familyCheck(row *device.Row, n *Node, gi int, r *ContainerRequest, usedSlots int32, usedMem, usedCores, memNeed, coresNeed int64) (Check, bool) {
	g := &n.GPUs[gi]
	s := f.sels[r.Kind]
	d := &f.dev
	*d = device.Dev{Kind: &f.c.kinds[r.Kind], UUID: g.UUID, Type: g.Type, Index: g.Index, Slots: g.Slots,
		TotalMem: g.TotalMem, TotalCores: g.TotalCores, UsedSlots: usedSlots, UsedMem: usedMem, UsedCores: usedCores,
		MemNeed: memNeed, CoresNeed: coresNeed, AskedCores: r.Cores, PodQos: -1, Sharers: g.qos, RegQos: g.regQos(),
		TakenByPod: f.extra[gi].slots > 0}
	if s != nil {
		d.PodQos = int(s.qos)
	}
	f.takenNode, f.takenGPU = n, gi
	if f.otherTakenF == nil {
		f.otherTakenF = f.otherTaken // bound once per evaluation, and only for a type with family rows
	}
	if f.groupUsedF == nil {
		f.groupUsedF = f.groupUsed
	}
	d.OtherTakenF, d.GroupUsedF, d.Mutex = f.otherTakenF, f.groupUsedF, f.req.Mutex
	o := row.Check(d)
	if o.Skip {
		return Check{}, false
	}
	c := Check{Gate: row.Name, Need: o.Need, Have: o.Have, Unit: o.Unit}
	if o.Fail {
		c.Code, c.Detail = Code(row.Code), o.Detail
	}
	return c, true
}

// otherTaken is device.Dev.OtherTaken for the device familyCheck runs on: another device of its type that an
// earlier container of the pod took on the node.
func (f *fitter) otherTaken() string {
	n, gi := f.takenNode, f.takenGPU
	g := &n.GPUs[gi]
	for j := range n.GPUs {
		if j != gi && n.GPUs[j].Kind == g.Kind && f.extra[j].slots > 0 {
			return n.GPUs[j].UUID
		}
	}
	return ""
}

// groupUsed is device.Dev.GroupUsed for the device familyCheck runs on: another device of its type in its
// interconnect group that is in use on the node.
func (f *fitter) groupUsed() string {
	n, gi := f.takenNode, f.takenGPU
	g := &n.GPUs[gi]
	group := g.networkID()
	if group == nil {
		return ""
	}
	for j := range n.GPUs {
		o := &n.GPUs[j]
		if j == gi || o.Kind != g.Kind {
			continue
		}
		if id := o.networkID(); id != nil && *id == *group {
			if used, _, _ := f.used(o, j); used > 0 {
				return o.UUID
			}
		}
	}
	return ""
}

// nodeRowCheck runs the node rows of container ci's type on node n (device.Row.NodeCheck): the first that fails
// decides the node, with HAMi's text for it, one count over the type's devices (GenReason(reason,
// len(devices)) after a single reason[code]++, as Ascend's Fit writes ModeNotFit).
func (f *fitter) nodeRowCheck(n *Node, ci int) (*Check, string) {
	r := &f.req.Containers[ci]
	for _, row := range f.c.rows[r.Kind].node {
		o := row.NodeCheck(n.annos, f.req.annos)
		if o.Skip || !o.Fail {
			continue
		}
		chk := &Check{Gate: row.Name, Code: Code(row.Code), Need: o.Need, Have: o.Have, Unit: o.Unit, Detail: o.Detail}
		return chk, "1/" + itoa(n.devicesFor(r.Kind)) + " " + row.Code
	}
	for _, row := range f.c.rows[r.Kind].resolve {
		if o := f.resolve(row, n, ci); o.Fail {
			chk := &Check{Gate: row.Name, Code: Code(row.Code), Need: o.Need, Have: o.Have, Unit: o.Unit, Detail: o.Detail}
			return chk, "1/" + itoa(n.DevicesOf(r.Kind)) + " " + row.Code
		}
	}
	return nil, ""
}

// resolve runs a resolve row (device.Row.Resolve) for container ci on node n: the container's request as its
// family read it becomes what it takes on n, in the fitter's own copy of the request (ownRequest).
func (f *fitter) resolve(row *device.Row, n *Node, ci int) device.Outcome {
	r := &f.req.Containers[ci]
	orig := &f.orig.Containers[ci]
	a := device.Ask{Count: orig.Count, MemoryMiB: orig.MemoryMiB, MemoryPercent: orig.MemoryPercent, Cores: orig.Cores, Slots: orig.slots}
	if orig.profile != nil {
		p := *orig.profile
		a.Profile = &p
	}
	o := row.Resolve(n.annos, &a)
	r.MemoryMiB, r.MemoryPercent, r.Cores, r.slots, r.profile = a.MemoryMiB, a.MemoryPercent, a.Cores, a.Slots, a.Profile
	if a.Profile != nil {
		r.Template = a.Profile.Name
	}
	return o
}

// ownRequest gives the fitter its own copy of the pod's request when a container's type has a resolve row,
// which rewrites the copy's containers node by node; the request is shared by the other fitters otherwise.
func (f *fitter) ownRequest(req *PodRequest) {
	f.orig = req
	for i := range req.Containers {
		if len(f.c.rows[req.Containers[i].Kind].resolve) > 0 {
			own := *req
			own.Containers = append([]ContainerRequest(nil), req.Containers...)
			f.req = &own
			return
		}
	}
}
