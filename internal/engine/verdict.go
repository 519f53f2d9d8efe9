package engine

import (
	"strconv"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Check is one gate's result for one GPU (or node), with the numbers that decided it.
type Check struct {
	Gate   string `json:"gate"`
	Code   Code   `json:"code,omitempty"` // set when the gate failed
	Need   int64  `json:"need,omitempty"`
	Have   int64  `json:"have,omitempty"`  // what is free or found
	Total  int64  `json:"total,omitempty"` // the capacity or limit
	Unit   string `json:"unit,omitempty"`  // MiB, %, slots, GPUs
	Detail string `json:"detail,omitempty"`
}

// Failed reports whether the gate rejected the GPU.
func (c Check) Failed() bool { return c.Code != "" }

// GPUStatus is how one GPU fared for the node's deciding container.
type GPUStatus struct {
	Index    int    `json:"index"`
	UUID     string `json:"uuid"`
	Type     string `json:"type"`
	Numa     int    `json:"numa"`
	Selected bool   `json:"selected,omitempty"`
	// other marks a device of another type than the deciding container's: not a candidate, not a reason.
	other bool
	// instances is how many times the deciding container's walk took the device (HAMi's MIG walk takes a GPU
	// again, pkg/device/nvidia/device.go:846-848); HAMi counts AllocatedCardsInsufficientRequest per instance.
	// again is the code of the walk's second look at a taken MIG GPU, one more reason HAMi counts for it.
	instances int
	again     Code
	// Result is the first failing gate; an empty Code means the GPU passed every gate.
	Result Check `json:"result"`
	// Checks is every gate's result, filled only for nodes asked for in detail.
	Checks []Check `json:"checks,omitempty"`
}

// Other reports whether the device is of another type than the deciding container asks for (a DCU when
// it asks for GPUs): HAMi never looks at it for that container.
func (s *GPUStatus) Other() bool { return s.other }

// NodeStatus is one node's answer: fits, or the first failing container and gate.
type NodeStatus struct {
	Node      string  `json:"node"`
	Fits      bool    `json:"fits"`
	Score     float64 `json:"score,omitempty"`
	Code      Code    `json:"code,omitempty"`      // node-level code, or the most common GPU code of the failing container
	Container string  `json:"container,omitempty"` // the first container that did not fit
	// Reason is HAMi's FailedNodes text: "%d/%d %s" per GPU reason, sorted, joined with ", ".
	Reason string `json:"reason,omitempty"`
	Check  *Check `json:"check,omitempty"` // numbers of a node-level failure
	// CardRank is the index of the pod's volcano.sh/card.name alternative this node offers; lower ranks first.
	CardRank int `json:"cardRank,omitempty"`
	// Example is the GPU that shows the deciding code with the most headroom (GPU-level failures).
	Example *GPUStatus `json:"example,omitempty"`
	// GPUs is every GPU's result, filled for nodes asked for in detail (EvalOptions.DetailNodes/DetailAll).
	GPUs []GPUStatus `json:"gpus,omitempty"`
}

// PlacedDevice is one GPU share given to a container.
type PlacedDevice struct {
	UUID         string              `json:"uuid"`
	Index        int                 `json:"index"`
	Type         string              `json:"type"`
	MemMiB       int64               `json:"memMiB"`
	Cores        int64               `json:"cores"`
	MigProfile   string              `json:"migProfile,omitempty"`
	MigPlacement *codec.MigPlacement `json:"migPlacement,omitempty"`
	// Device is the device type when it is not an NVIDIA GPU ("DCU"); Kind its index in Config.Kinds.
	Device string `json:"device,omitempty"`
	Kind   int    `json:"-"`
	// CoreMask is the bit mask of the device's cores given, for a type whose device list records cores as a
	// mask (device.Kind.CoresMask); 0 otherwise.
	CoreMask int64 `json:"coreMask,omitempty"`
	// deviceCores are the device's registered cores, and profile the slice the container's request resolved
	// to on the node (device.Row.Resolve), for the bind's own annotations.
	deviceCores int64
	profile     *device.Profile
}

// ContainerPlacement is the GPUs chosen for one container.
type ContainerPlacement struct {
	Name    string         `json:"name"`
	Init    bool           `json:"init,omitempty"`
	Index   int            `json:"index"`
	Devices []PlacedDevice `json:"devices"`
	// byCores: the container asked by its type's cores resource alone (ContainerRequest.ByCores).
	byCores bool
}

// Placement is where a pod goes.
type Placement struct {
	Node       string               `json:"node"`
	Score      float64              `json:"score"`
	Containers []ContainerPlacement `json:"containers"`
	// InitContainers and AppContainers size the device list so that every container has its entry.
	InitContainers int `json:"initContainers"`
	AppContainers  int `json:"appContainers"`

	// kinds are the cluster's device types and podAnnos the pod's annotations, for the annotations of other
	// types than NVIDIA's; a Placement built without them writes NVIDIA's alone.
	kinds    []device.Kind
	podAnnos map[string]string
}

// ReasonCount is how many nodes failed with a code (each node counted once, by its deciding code).
type ReasonCount struct {
	Code  Code `json:"code"`
	Nodes int  `json:"nodes"`
}

// Verdict is the engine's whole answer for one pod. Every surface renders it; none recomputes it.
type Verdict struct {
	Pod string `json:"pod"`
	// Scheduler names the scheduler that decides the pod (spec.schedulerName). HAMi's gates apply only to HAMi's
	// profile; other schedulers get kube-scheduler's standard checks (and Volcano the card quota), and a fitting
	// verdict of theirs, like one for a pod with no GPU HAMi manages, has no Placement: HAMi chooses no GPU.
	Scheduler string `json:"scheduler,omitempty"`
	// NotHAMi is set when another scheduler than HAMi's profile decides the pod.
	NotHAMi bool `json:"notHAMi,omitempty"`
	// Routing says, for a pod that asks for HAMi's resources but is addressed to another scheduler, why no
	// node will ever fit; it comes first on every surface.
	Routing      string         `json:"routing,omitempty"`
	Request      *PodRequest    `json:"request"`
	NoGPURequest bool           `json:"noGPURequest,omitempty"`
	Fits         bool           `json:"fits"`
	Placement    *Placement     `json:"placement,omitempty"`
	Summary      string         `json:"summary"`
	Explanation  []string       `json:"explanation,omitempty"`
	Reasons      []ReasonCount  `json:"reasons,omitempty"`
	Quota        QuotaStatus    `json:"quota"`
	Card         *CardStatus    `json:"card,omitempty"`    // Volcano card-model quota, when the pod names a card and a queue
	Enqueue      *EnqueueStatus `json:"enqueue,omitempty"` // the job-level enqueue check, when the pod's PodGroup waits for it
	Hints        []string       `json:"hints,omitempty"`
	// Fixes are the changes the engine proved (Cluster.ProveFixes), each evaluated on a copy of the world.
	Fixes    []Fix     `json:"fixes,omitempty"`
	Problems []Problem `json:"problems,omitempty"`

	// nodes is every evaluated node's status in name order (Nodes); an evaluation of a HAMi pod's devices
	// leaves it to lazy, which builds it when first read.
	nodes []NodeStatus
	lazy  *statusRows
	// feasible is the fitting nodes, best first (Feasible); a HAMi pod's evaluation leaves their order to
	// ranking, which sorts them when first read.
	feasible []string
	ranking  *feasibleRanking
}

// Nodes is every evaluated node's status, in name order. The statuses of a HAMi pod's evaluation are built
// from the verdict's rows when first read (lazystatus.go); the verdict may be read from several goroutines.
func (v *Verdict) Nodes() []NodeStatus {
	if l := v.lazy; l != nil {
		l.once.Do(func() { l.built = l.statuses() })
		return l.built
	}
	return v.nodes
}

// NodeCount is the number of evaluated nodes (len(Nodes()) without building the statuses).
func (v *Verdict) NodeCount() int {
	if v.lazy != nil {
		return len(v.lazy.rows)
	}
	return len(v.nodes)
}

// NodeWith is the status a one-line answer quotes for a code: of the nodes failing with it at a node-level
// check, the one closest to passing (the most found: Check.Have; the first on a tie), else the first node in
// name order failing with it; nil when none does. Only that node's status is built.
func (v *Verdict) NodeWith(code Code) *NodeStatus {
	l := v.lazy
	if l == nil {
		return nodeWith(v.nodes, code)
	}
	best, first := -1, -1
	for i := range l.rows {
		if c, _ := l.outcome(i); c != code {
			continue
		}
		if first < 0 {
			first = i
		}
		if chk := l.check(i); chk != nil && (best < 0 || chk.Have > l.check(best).Have) {
			best = i
		}
	}
	if best < 0 {
		best = first
	}
	if best < 0 {
		return nil
	}
	ns := new(NodeStatus)
	l.status(best, ns, new(GPUStatus))
	return ns
}

// nodeWith is NodeWith over built statuses.
func nodeWith(nodes []NodeStatus, code Code) *NodeStatus {
	var best, first *NodeStatus
	for i := range nodes {
		ns := &nodes[i]
		if ns.Code != code {
			continue
		}
		if first == nil {
			first = ns
		}
		if ns.Check != nil && (best == nil || ns.Check.Have > best.Check.Have) {
			best = ns
		}
	}
	if best != nil {
		return best
	}
	return first
}

// SetNodes sets the verdict's node statuses (a verdict built outside the engine: tests, a decoded answer).
func (v *Verdict) SetNodes(nodes []NodeStatus) { v.nodes, v.lazy = nodes, nil }

// Feasible is the fitting nodes, best first (in name order for EvalOptions.Unranked). A HAMi pod's evaluation
// sorts them when they are first read (lazystatus.go); the verdict may be read from several goroutines.
func (v *Verdict) Feasible() []string {
	if r := v.ranking; r != nil {
		r.once.Do(func() { r.names = r.rank() })
		return r.names
	}
	return v.feasible
}

// SetFeasible sets the verdict's fitting nodes (a verdict built outside the engine: tests, a decoded answer).
func (v *Verdict) SetFeasible(names []string) { v.feasible, v.ranking = names, nil }

// NodeStatus returns the status of the named node, or nil.
func (v *Verdict) NodeStatus(name string) *NodeStatus {
	nodes := v.Nodes()
	for i := range nodes {
		if nodes[i].Node == name {
			return &nodes[i]
		}
	}
	return nil
}

// PodDevices renders the placement as HAMi's per-container device list (v2.9+ layout: init containers
// first, every container has an entry).
func (p *Placement) PodDevices() codec.PodDevices { return p.PodDevicesOf(0) }

// PodDevicesOf is PodDevices for the devices of one type (an index in Config.Kinds), each device carrying
// the type's word ("NVIDIA", "DCU", "Ascend910B3") as HAMi writes it.
func (p *Placement) PodDevicesOf(kind int) codec.PodDevices {
	k, write := nvidiaListKind, device.ListByName
	if kind >= 0 && kind < len(p.kinds) {
		k = &p.kinds[kind]
		write = k.Writer()
	}
	out := make(codec.PodDevices, p.InitContainers+p.AppContainers)
	for _, c := range p.Containers {
		i := c.Index
		if !c.Init {
			i += p.InitContainers
		}
		if i >= len(out) {
			continue
		}
		for _, d := range c.Devices {
			if d.Kind == kind {
				out[i] = append(out[i], write(k, device.Listed{UUID: d.UUID, Type: d.Type, Mem: d.MemMiB, Cores: d.Cores, Mask: d.CoreMask}))
			}
		}
	}
	return out
}

// nvidiaListKind names the devices of a placement made without Kinds (NVIDIA's only, as HAMi writes them).
var nvidiaListKind = &device.Kind{Name: "NVIDIA"}

// usesKind reports whether any device of the placement is of the type.
func (p *Placement) usesKind(kind int) bool {
	for _, c := range p.Containers {
		for _, d := range c.Devices {
			if d.Kind == kind {
				return true
			}
		}
	}
	return false
}

// MigAllocations lists the MIG reservations of the placement, if any.
func (p *Placement) MigAllocations() []codec.MigAllocation {
	var out []codec.MigAllocation
	for _, c := range p.Containers {
		ci := c.Index
		if !c.Init {
			ci += p.InitContainers
		}
		for di, d := range c.Devices {
			if d.MigPlacement != nil {
				out = append(out, codec.MigAllocation{ContainerIndex: ci, DeviceIndex: di, GPUUUID: d.UUID, Profile: d.MigProfile, Placement: *d.MigPlacement})
			}
		}
	}
	return out
}

// PlacementKeys are every pod annotation a bind may write for the configured device types: HAMi's node,
// time, bind-phase and NVIDIA keys first (in that order), then each other type's device lists and own keys.
func PlacementKeys(cfg Config) []string {
	out := []string{codec.PodNodeAnnotation, codec.PodTimeAnnotation, codec.PodToAllocateAnnotation,
		codec.PodAllocatedAnnotation, codec.PodBindPhaseAnnotation, codec.PodBindTimeAnnotation, codec.PodMigAllocationsAnnotation}
	seen := map[string]bool{}
	for _, k := range out {
		seen[k] = true
	}
	for _, k := range cfg.normalized().Vendors {
		for _, key := range append([]string{k.ToAllocate, k.Allocated}, k.ExtraKeys...) {
			if !seen[key] {
				seen[key] = true
				out = append(out, key)
			}
		}
	}
	return out
}

// DeviceListKeys are the device-list annotations of every configured type, NVIDIA's first.
func DeviceListKeys(cfg Config) []string {
	out := []string{codec.PodToAllocateAnnotation, codec.PodAllocatedAnnotation}
	for _, k := range cfg.normalized().Vendors {
		out = append(out, k.ToAllocate, k.Allocated)
	}
	return out
}

// Annotations are the pod annotations HAMi's scheduler writes for this placement at bind time.
func (p *Placement) Annotations(now time.Time) map[string]string {
	unix := strconv.FormatInt(now.Unix(), 10)
	a := map[string]string{
		codec.PodNodeAnnotation:      p.Node,
		codec.PodTimeAnnotation:      unix,
		codec.PodBindPhaseAnnotation: codec.BindPhaseAllocating,
		codec.PodBindTimeAnnotation:  unix,
	}
	if p.kinds == nil || p.usesKind(0) { // Config.Kinds puts the main kind (NVIDIA's) first
		devs := codec.FormatPodDevices(p.PodDevices())
		a[codec.PodToAllocateAnnotation], a[codec.PodAllocatedAnnotation] = devs, devs
	}
	for k := range p.kinds {
		if mainKind(&p.kinds[k]) || !p.usesKind(k) {
			continue
		}
		kind := &p.kinds[k]
		pd := p.PodDevicesOf(k)
		devs := codec.FormatPodDevices(pd)
		a[kind.ToAllocate], a[kind.Allocated] = devs, devs
		if kind.BindExtra != nil {
			placed := make([][]device.Placed, len(pd))
			for _, c := range p.Containers {
				i := c.Index
				if !c.Init {
					i += p.InitContainers
				}
				for _, d := range c.Devices {
					if d.Kind == k && i < len(placed) {
						placed[i] = append(placed[i], device.Placed{UUID: d.UUID, Index: d.Index, Mem: d.MemMiB, Cores: d.Cores, Mask: d.CoreMask, ByCores: c.byCores, DeviceCores: d.deviceCores, Container: c.Name, Profile: d.profile})
					}
				}
			}
			annos := make(map[string]string, len(p.podAnnos)+len(a))
			for key, v := range p.podAnnos {
				annos[key] = v
			}
			for key, v := range a {
				annos[key] = v
			}
			for key, v := range kind.BindExtra(kind, placed, annos, now.Unix()) {
				a[key] = v
			}
		}
	}
	if mig := p.MigAllocations(); len(mig) > 0 {
		a[codec.PodMigAllocationsAnnotation] = codec.FormatMigAllocations(mig)
	}
	return a
}
