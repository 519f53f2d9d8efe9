// Package device is the seam between the engine and the device families HAMi schedules. A family (a
// "vendor" in HAMi's words: pkg/device/devices.go) is a package under internal/device/<name> that implements
// Family and contributes one or more Kinds, one per device type HAMi keeps apart (its CommonWord: "NVIDIA",
// "DCU", "Ascend910B3" ...). A Kind is the type's data (annotations, resource names, the word people use for
// it) and its behaviour: its readers (ReadRequest, ReadRegister, ReadAllocation: building blocks of this
// package that the family chooses, or its own composed of them; Mutate, its webhook), its device selection
// (Select), its bind annotations (BindExtra), and its gate rows (Rows: the engine's building blocks it opts
// into and its own rows, each carrying its check).
//
// The engine owns the one walk (sort, scoring, quota, explanation) and the rows every type runs; it asks the
// Kind for the rest. Adding a family is one package under internal/device/<name> and one line in
// internal/device/all.
//
// This package and its sub-packages are pure: no client-go, no I/O, no clock.
package device

import (
	"fmt"
	"strings"
)

// Kind is one device type HAMi schedules.
type Kind struct {
	// Vendor is the family's registry name, which --device selects by: "nvidia", "hygon", "ascend", ...
	Vendor string `json:"vendor"`
	// Name is HAMi's CommonWord for the type, also the vendor field of a pod's device list:
	// "NVIDIA", "DCU", "Ascend910B3", "MLU", "Metax-GPU", "MR-V100".
	Name string `json:"name"`
	// Word is what people call one device: GPU, DCU, NPU, MLU.
	Word string `json:"word"`

	// Register is the node annotation the device plugin registers devices in (HAMi's JSON list); "" when the
	// devices are derived from the Node itself (ReadRegister FromNode).
	Register string `json:"register,omitempty"`
	// Handshake is the node annotation of the plugin's handshake; "" when the family has none.
	Handshake string `json:"handshake,omitempty"`
	// ToAllocate and Allocated are the pod annotations written at bind with this type's devices.
	ToAllocate string `json:"toAllocate"`
	Allocated  string `json:"allocated"`
	// Type and UUID selector annotations of the pod; "" when the family has none (every device matches).
	UseType   string `json:"useType,omitempty"`
	NoUseType string `json:"noUseType,omitempty"`
	UseUUID   string `json:"useUUID,omitempty"`
	NoUseUUID string `json:"noUseUUID,omitempty"`

	// Resource names; "" when the family has none.
	Count         string `json:"count"`
	Memory        string `json:"memory,omitempty"`
	MemoryPercent string `json:"memoryPercent,omitempty"`
	Cores         string `json:"cores,omitempty"`
	// MemoryFactor multiplies a memory request (HAMi's memoryFactor); 0 or 1 leaves it.
	MemoryFactor int64 `json:"memoryFactor,omitempty"`
	// DefaultCores are the cores a container gets when it names none (Hygon: 100, a whole device).
	DefaultCores int64 `json:"defaultCores,omitempty"`
	// Pair is the number of devices that must be taken together from one module (Ascend 910C on a
	// SuperPod: 2); 0 when devices are taken one by one. Devices i and j share a module when i/Pair == j/Pair.
	Pair int `json:"pair,omitempty"`

	// Templates are the fixed slices a device can be cut into, smallest first (Ascend vNPU). A memory request
	// is rounded up to the first template that holds it; one above every template takes the whole device.
	Templates []Template `json:"templates,omitempty"`
	// MemoryAllocatable and MemoryCapacity bound a template request: up to MemoryCapacity it becomes
	// MemoryAllocatable (a whole device); above it nothing fits.
	MemoryAllocatable int64 `json:"memoryAllocatable,omitempty"`
	MemoryCapacity    int64 `json:"memoryCapacity,omitempty"`

	// BindExtra returns the family's own pod annotations for its devices at bind, beside ToAllocate and
	// Allocated; containers are in the pod device list's order, now is the bind's unix time. nil when the
	// family writes none. podAnnos are the pod's annotations with the bind's own (hami.io/vgpu-node ...)
	// written over them, as HAMi's PatchAnnotations sees them.
	BindExtra func(k *Kind, containers [][]Placed, podAnnos map[string]string, now int64) map[string]string `json:"-"`
	// QosAnnotation is the pod annotation naming the pod's QoS policy, one of QosPolicies (QosPolicies[0] when
	// unset: the webhook's default): the request reader refuses another value, the allocation reader counts
	// each device's sharers by policy, and the family's own row (MetaX sGPU's qos row) decides with them.
	// "" when the family has no policies.
	QosAnnotation string   `json:"qosAnnotation,omitempty"`
	QosPolicies   []string `json:"qosPolicies,omitempty"`

	// UnhealthyCode is the reason the family's Fit gives an unhealthy device when it is not HAMi's common
	// CardNotHealth (MetaX sGPU: CardUnhealthy, pkg/device/metax/sdevice.go:347-351); "" is CardNotHealth.
	UnhealthyCode string `json:"unhealthyCode,omitempty"`

	// Unslotted means the family's Fit never compares a device's users with its registered count, so the
	// slots gate (CardTimeSlicingExhausted) passes every device (Kunlun vXPU's FitVXPU checks health, memory
	// and the equal share only, pkg/device/kunlun/vdevice.go:294-306 at v2.10.0).
	Unslotted bool `json:"unslotted,omitempty"`

	// ExtraKeys are the annotation keys BindExtra may write, which a rollback takes back.
	ExtraKeys []string `json:"extraKeys,omitempty"`

	// Mutate is the family's admission webhook on one container's request (MutateAdmission), in the
	// resources' own units before MemoryFactor: it may rewrite memory and cores (Mthreads' whole-GPU defaults,
	// Kunlun's vXPU memory steps). A non-empty result is why the webhook refuses the pod. nil leaves the
	// request as written.
	Mutate func(r *Request) string `json:"-"`
	// ModeAnnotation is the pod annotation whose value Mutate reads as Request.Mode (Ascend's
	// huawei.com/vnpu-mode: hami-core takes -core and keeps memory off the templates). "" when none.
	ModeAnnotation string `json:"modeAnnotation,omitempty"`
	// Select chooses count devices among those that passed every gate, given by their Index in ascending
	// order (Kunlun's interconnect rule, graghSelect); nil when no set satisfies the rule. model is the
	// registered type of the node's devices (AWS Neuron: the instance type, whose family decides the rule).
	// SelectRule names the rule for explanations. nil Select takes the first count devices of the walk.
	Select     func(fit []int, count int, model string) []int `json:"-"`
	SelectRule string                                         `json:"selectRule,omitempty"`
	// SelectInOrder, when set, is used instead of Select: it gets every device of the Kind in the order HAMi
	// hands them to its Fit (the score-sorted list), by Index, with whether each passed every gate, and
	// returns the chosen Indexes (nil: no set). HAMi's Kunlun graghSelect reads its wings from positions in
	// that list, not from indices (pkg/device/kunlun/topo.go:222-268); AWS Neuron's graphSelect takes positions
	// in it for indices (pkg/device/awsneuron/device.go:406-473). model is as for Select.
	SelectInOrder func(order []int, fit []bool, count int, model string) []int `json:"-"`
	// Prioritize, when set, chooses count devices among every device of the Kind that passed its gates, more
	// than count of them, given in the order HAMi's Fit walks them with each one's registered interconnect
	// group; cores is the container's cores request and pod the pod's annotations (MetaX sGPU's
	// prioritizeExclusiveDevices by linkZone, pkg/device/metax/sdevice.go:439-451, 579-645 at v2.10.0). It
	// returns the chosen Indexes; nil, or fewer than count, keeps the first count of the walk. nil Prioritize
	// takes the first count of the walk.
	Prioritize func(walk []Candidate, count int, cores int64, pod map[string]string) []int `json:"-"`
	// FitFailure, when set, is the node's reason when the Kind's Fit places nothing, in HAMi's words, in place
	// of the count of each device's first failing gate: it gets each of the Kind's devices' first failing gate
	// (Gate "" passed) and returns HAMi's code and how many devices it counts (Kunlun: "1/N NumaNotFit").
	// asked is the container's count (AWS Neuron's Fit fails a request of several devices by one NumaNotFit).
	FitFailure func(first []Failure, asked int) (code string, count int) `json:"-"`
	// ScoreNode is the family's addition to a fitting node's score (HAMi's ScoreNode, which OverrideScore adds
	// to the node's default score, pkg/scheduler/policy/node_policy.go:67-95): node is every device of the node
	// before the pod; placed holds, for each of the pod's containers asking for the Kind that took devices,
	// the positions in node of those it took, as HAMi hands its ScoreNode the pod's device list of the type
	// (init containers first, then the app containers, each in container order: pkg/scheduler/score.go:
	// 226-342 at v2.10.0). A family that scores container by container (Vastai's dies, Ascend's NetworkIDs)
	// reads each entry apart. nil adds nothing.
	ScoreNode func(node []ScoredDevice, placed [][]int) float64 `json:"-"`
	// Sees, when set, says which of a node's devices a request of the Kind is judged on, by each device's
	// registered type, whatever Kind registered it: HAMi hands a request's Fit every device of the node whose
	// type contains the request's type (getNodeResources, pkg/scheduler/score.go:43-52 at v2.10.0), so an
	// Ascend910B4 request is judged, and placed, on Ascend910B4-1 NPUs. The Kind's own rules decide on them
	// (its Fit runs), and its device lists record them. nil: the Kind's own devices (TypeContains is HAMi's rule).
	Sees func(deviceType string) bool `json:"-"`
	// Topology, when set, is the family's device topology on a node (HAMi's needTopology: Ascend's NetworkID
	// groups): given every device a request of the Kind sees, in HAMi's sorted order, it returns nil when the
	// node has none (the walk takes the first devices that pass), else choose: the walk then collects every
	// device that passes, and when they are at least count, choose gets them in the order HAMi's Fit found them
	// and returns the positions (in cands) the container takes, in order. HAMi's Fit takes what its choice
	// returns, fewer than count included (Ascend's computeBestCombination drops the candidates another Kind
	// registered), and so does the engine.
	Topology func(devs []ScoredDevice) (choose func(cands []ScoredDevice, count int) []int) `json:"-"`
	// CoresMask means the device's cores are a count of cores of which a placement takes particular ones,
	// the lowest free (AWS Neuron's NeuronCores): the walk keeps each device's mask of taken cores, and the
	// family's readers and writer carry it (ReadCoreMasks, ListCoreMask).
	CoresMask bool `json:"coresMask,omitempty"`
	// CoresUnit is the unit of the Cores resource in quota lines; "" is "%".
	CoresUnit string `json:"coresUnit,omitempty"`
	// WholeCores, when set, are the cores per device the family's GenerateResourceRequests asks for a
	// container taking its devices whole (Request.Whole), which HAMi's webhook counts against the quota:
	// learned are the cores per device of the first node HAMi registered with devices of the Kind, 0 before
	// any (AWS Neuron's coresPerAWSNeuron); byCores is Ask.ByCores. nil counts every core of each device.
	WholeCores func(learned int64, byCores bool) int64 `json:"-"`

	// The family's readers, each one of the building blocks of request.go and register.go or its own
	// composed of them; nil takes the default (Readers).
	//
	// ReadRequest reads one container's request (GenerateResourceRequests and MutateAdmission); nil is
	// ShareRequest. Asks says whether a container asks for the Kind at all; nil is NamesCount. Admit is the
	// webhook's refusal of a container; nil is AdmitCount (Mutate on a container naming a count).
	ReadRequest RequestReader `json:"-"`
	Asks        Asker         `json:"-"`
	Admit       Admitter      `json:"-"`
	// ReadRegister reads the node's devices of the type; nil is RegisterList (HAMi's list in Register).
	ReadRegister RegisterReader `json:"-"`
	// ReadAllocation reads a counted pod's device list (Allocated or ToAllocate); nil is ReadDeviceList.
	// WriteList is its inverse at bind, one placed device's entry; nil is ListByName.
	ReadAllocation AllocationReader `json:"-"`
	WriteList      ListWriter       `json:"-"`

	// Rows are the gate rows the type runs beyond those every type runs (health, type, uuid, slots, mutex,
	// memory, cores, exclusive, compute, set): the engine's building blocks it opts into (ReadyRow, NumaRow,
	// QuotaRow, MIGRow, CordonRow) and the family's own rows, each with its check (Row.Check).
	Rows []Row `json:"-"`
}

// Failure is one device's first failing gate for FitFailure: the gate's name and code ("" when it passed), and
// whether the pod's UUID selectors refuse the device whatever gate failed first (Kunlun's Fit checks the UUID
// before anything else, pkg/device/kunlun/device.go:190-198 at v2.10.0).
type Failure struct {
	Gate, Code  string
	UUIDRefused bool
}

// Candidate is one device that passed every gate, as Prioritize sees it: its Index and its registered
// interconnect group (codec.DeviceInfo.NetworkID: Ascend's NetworkID, MetaX sGPU's linkZone), nil when none.
type Candidate struct {
	Index int
	Group *int
}

// ScoredDevice is one device of a node as ScoreNode and Topology see it before the pod: its registered type,
// its Index, whether any pod uses it, and the Kind that registered it (HAMi's DeviceVendor, filled for
// Topology).
type ScoredDevice struct {
	Type   string
	Index  int
	Used   bool
	Vendor string
	// NetworkID is the device's registered customInfo.NetworkID (Ascend), nil when none.
	NetworkID *int
}

// Request is one container's request for a Kind as the family's webhook sees it: the count, and memory and
// cores in the resources' own units, with whether the container names them.
type Request struct {
	Count               int64
	Memory, Cores       int64
	HasMemory, HasCores bool
	// Whole is set by Mutate when the container takes each of its devices whole (every core), whatever
	// Cores says.
	Whole bool
	// Mode is the pod's value of the Kind's ModeAnnotation ("" when unset or the Kind has none).
	Mode string
}

// Template is one fixed slice of a device.
type Template struct {
	Name   string `json:"name"`
	Memory int64  `json:"memory"` // MiB
	AICore int64  `json:"aiCore,omitempty"`
}

// Placed is one device given to one container, as BindExtra sees it.
type Placed struct {
	UUID  string
	Index int
	Mem   int64
	Cores int64
	// Mask is the bit mask of the device's cores given, for a Kind with CoresMask; 0 otherwise.
	Mask int64
	// ByCores is set when the container asked by the Cores resource alone (device.CountOrCores).
	ByCores bool
	// DeviceCores are the device's cores as registered.
	DeviceCores int64
	// Container is the container's name; Profile the slice its request resolved to on the node (a Kind with
	// a resolve row: Enflame DRS-GCU), nil otherwise.
	Container string
	Profile   *Profile
}

// Trim rounds a memory request (MiB) up to the Kind's templates: the template's memory and name, or the
// whole device (MemoryAllocatable, "") for a request above every template up to MemoryCapacity. ok is false
// when nothing holds it. A Kind without templates returns the request unchanged.
func (k *Kind) Trim(mib int64) (mem int64, template string, ok bool) {
	if len(k.Templates) == 0 {
		return mib, "", true
	}
	for _, t := range k.Templates {
		if mib <= t.Memory {
			return t.Memory, t.Name, true
		}
	}
	if mib <= k.MemoryCapacity {
		return k.MemoryAllocatable, "", true
	}
	return 0, "", false
}

// Resources lists the Kind's resource names, count first.
func (k *Kind) Resources() []string {
	var out []string
	for _, r := range []string{k.Count, k.Memory, k.MemoryPercent, k.Cores} {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}

// Validate says what is missing from a Kind a vendor built.
func (k *Kind) Validate() error {
	switch {
	case k.Vendor == "" || k.Name == "" || k.Word == "":
		return fmt.Errorf("device kind %q: vendor, name and word are required", k.Name)
	case k.Register == "" && k.ReadRegister == nil:
		return fmt.Errorf("device kind %s: a register annotation or a register reader is required", k.Name)
	case k.Allocated == "" || k.ToAllocate == "":
		return fmt.Errorf("device kind %s: allocated and to-allocate annotations are required", k.Name)
	case k.Count == "":
		return fmt.Errorf("device kind %s: a count resource is required", k.Name)
	}
	for i := range k.Rows {
		r := &k.Rows[i]
		switch {
		case r.checks() > 1:
			return fmt.Errorf("device kind %s: row %q has more than one of a device check, a node check and a resolve", k.Name, r.Name)
		case r.checks() == 0 && !buildingBlock(r.Name):
			return fmt.Errorf("device kind %s: row %q has no check and is none of the engine's building blocks", k.Name, r.Name)
		case r.checks() == 1 && (r.Number == "" || r.Name == "" || r.Code == ""):
			return fmt.Errorf("device kind %s: row %q needs a number, a name and a code", k.Name, r.Name)
		}
	}
	return nil
}

// Find picks a Kind by its name ("Ascend910B3", "DCU", "MR-V100"), case-insensitively, or by its vendor's
// name when the vendor has one Kind ("hygon", "cambricon", "nvidia"); "" means the first Kind.
func Find(kinds []Kind, name string) (int, error) {
	if name == "" && len(kinds) > 0 {
		return 0, nil
	}
	for i := range kinds {
		if strings.EqualFold(kinds[i].Name, name) {
			return i, nil
		}
	}
	found := -1
	for i := range kinds {
		if strings.EqualFold(kinds[i].Vendor, name) {
			if found >= 0 {
				return -1, fmt.Errorf("device %q has several types; name one: %s", name, strings.Join(namesOf(kinds, name), ", "))
			}
			found = i
		}
	}
	if found < 0 {
		return -1, fmt.Errorf("unknown device %q; known: %s", name, strings.Join(namesOf(kinds, ""), ", "))
	}
	return found, nil
}

func namesOf(kinds []Kind, vendor string) []string {
	var out []string
	for i := range kinds {
		if vendor == "" || strings.EqualFold(kinds[i].Vendor, vendor) {
			out = append(out, strings.ToLower(kinds[i].Name))
		}
	}
	return out
}
