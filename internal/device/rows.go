package device

import (
	"strconv"
	"strings"
)

// Row is one row of the engine's gate table that a device type runs on each of its devices, after
// kube-scheduler's plugin shape: the row owns its name, number, HAMi reason code, the table's text, its
// sentence and its check. A Kind lists in Rows the engine's building blocks it opts into (ReadyRow, NumaRow,
// QuotaRow, MIGRow, CordonRow: no Check, the engine holds theirs) and its family's own rows (with a Check). The engine
// compiles a Kind's rows once per cluster, not per evaluation, and renders every family row in the gate table
// (docs/engine.md) at its Number.
type Row struct {
	// Number is the row's place in the gate table: a GPU gate's number with a letter ("4a", "13b"). A family
	// row numbered below 5 runs beside the selectors (after the type filter, before the UUID filter); any
	// other after the common arithmetic (after gate 12).
	Number string
	// Name is the gate's name (Check.Gate), unique in the table.
	Name string
	// Code is HAMi's reason the row fails with ("CardNotFoundCustomFilterRule").
	Code string
	// Meaning, Numbers and Hint are the table's columns (Markdown): what passes, what a failure reports,
	// what a user can change.
	Meaning, Numbers, Hint string
	// Unresolvable: preempting pods cannot make the row pass.
	Unresolvable bool
	// Say is the explanation's sentence for the row's failures; nil leaves it to the code's first row.
	Say func(s Saying) string
	// Check decides the row on one device; nil for the engine's own building blocks and for a node row.
	Check func(d *Dev) Outcome
	// NodeCheck makes the row a node row: it decides once per container of the Kind, on the node's and the
	// pod's annotations, after the node's device count and before any device, as a family's Fit may turn a
	// node away before its device loop (Ascend's hami-vnpu-core capability, pkg/device/ascend/device.go:459-473
	// at v2.10.0). HAMi counts such a failure once over the Kind's devices: "1/4 ModeNotFit". A node row is
	// numbered after the node gate it follows ("n3a").
	NodeCheck func(node, pod map[string]string) Outcome
	// Resolve makes the row a resolve row: for a Kind whose devices are cut into the node's own fixed slices
	// (Enflame DRS-GCU's profiles), it turns one container's request into what it takes on that node, from
	// the node's annotations, writing a's MemoryMiB, Cores, Slots and Profile in place. It runs where a node
	// row does; a failure turns the node away counted once over the Kind's devices ("1/4 ModeNotFit",
	// pkg/device/enflame/device.go:389-392 at v2.10.0).
	Resolve func(node map[string]string, a *Ask) Outcome
}

// Saying is what a family row's sentence draws on.
type Saying struct {
	// GPUs is the number of devices that failed the row; Detail the example's detail, Where its place
	// ("node n1, GPU 0"; a node row's: "node n1").
	GPUs          int
	Detail, Where string
}

// Outcome is a row's result on one device.
type Outcome struct {
	// Skip: the row does not apply to this device (or to this pod) and reports nothing, not even a pass.
	Skip bool
	Fail bool
	// Need, Have, Unit and Detail are the Check's numbers; Detail is shown on a failure.
	Need, Have int64
	Unit       string
	Detail     string
}

// Dev is one device as a family row sees it in the walk: its registration, its use (counted pods plus the
// pod's earlier containers, less the pod's own old share), and what the container being fitted needs of it.
type Dev struct {
	Kind        *Kind
	UUID, Type  string
	Index       int
	Slots       int32
	TotalMem    int64
	TotalCores  int64
	UsedSlots   int32
	UsedMem     int64
	UsedCores   int64
	MemNeed     int64 // MiB on this device
	CoresNeed   int64 // cores on this device
	AskedCores  int64 // the container's cores request as written (a percentage unless the type counts cores)
	PodQos      int   // the pod's QoS policy, an index in Kind.QosPolicies; -1 when the type has none or it is refused
	Sharers     [MaxQosPolicies]int32
	RegQos      string        // the QoS policy the device registers (MetaX sGPU's qosPolicy); "" when none
	TakenByPod  bool          // an earlier container of the pod took this device
	OtherTakenF func() string // see OtherTaken
	Mutex       bool          // the pod's GPU scheduler policy has mutex
	GroupUsedF  func() string // see GroupUsed
}

// GroupUsed is the UUID of another device of the same type on the node, in the device's interconnect group
// (its registered NetworkID: Vastai's card), that is in use (by counted pods or an earlier container of the
// pod); "" when none is, or the device has no group.
func (d *Dev) GroupUsed() string {
	if d.GroupUsedF == nil {
		return ""
	}
	return d.GroupUsedF()
}

// OtherTaken is the UUID of another device of the same type on the node that an earlier container of the pod
// took, "" when none did.
func (d *Dev) OtherTaken() string {
	if d.OtherTakenF == nil {
		return ""
	}
	return d.OtherTakenF()
}

// MaxQosPolicies bounds a Kind's QoS policies (MetaX sGPU has three).
const MaxQosPolicies = 3

// The engine's building blocks a Kind opts into by listing them in Rows. Their checks and text live in the
// engine's gate table; only the name is read here.
var (
	// ReadyRow is node gate n2: the node's allocatable count of the type is above 0 (or within the handshake
	// grace). NVIDIA.
	ReadyRow = Row{Name: "devices-ready"}
	// NumaRow is gate 4, nvidia.com/numa-bind, and with it the topology-aware policy: HAMi's checkType says
	// "no NUMA" for every other family. NVIDIA.
	NumaRow = Row{Name: "numa"}
	// QuotaRow is gate 8: the type's Fit checks the namespace quota of its memory and cores keys per device
	// (NVIDIA; Cambricon's fitQuota). Other types' quota keys are accounted but gate nothing.
	QuotaRow = Row{Name: "quota"}
	// MIGRow is gate 13 on a device registered in MIG mode. NVIDIA.
	MIGRow = Row{Name: "mig"}
	// CordonRow is gate 2: the node's hami.io/device-cordon excludes the listed devices. Only NVIDIA's Fit
	// reads the annotation (pkg/device/nvidia/device.go:694-737 at v2.10.0); every other family's Fit places on
	// a listed device. NVIDIA.
	CordonRow = Row{Name: "cordon"}
)

// checks counts the row's checks: a device check, a node check, a resolve.
func (r *Row) checks() int {
	n := 0
	for _, set := range []bool{r.Check != nil, r.NodeCheck != nil, r.Resolve != nil} {
		if set {
			n++
		}
	}
	return n
}

// buildingBlock reports whether name is one of the engine's rows a Kind opts into without a check.
func buildingBlock(name string) bool {
	for _, r := range []*Row{&ReadyRow, &NumaRow, &QuotaRow, &MIGRow, &CordonRow} {
		if r.Name == name {
			return true
		}
	}
	return false
}

// Has reports whether the Kind lists a row of that name.
func (k *Kind) Has(name string) bool {
	for i := range k.Rows {
		if k.Rows[i].Name == name {
			return true
		}
	}
	return false
}

// RowKey orders gate numbers: "4" < "4a" < "5" < "13b" < "14". Numbers that are not a GPU gate's ("n1", "k3",
// "r") order before every GPU gate.
func RowKey(number string) (int, string) {
	i := 0
	for i < len(number) && number[i] >= '0' && number[i] <= '9' {
		i++
	}
	if i == 0 {
		return -1, number
	}
	n, _ := strconv.Atoi(number[:i])
	return n, strings.ToLower(number[i:])
}

// RowBefore reports whether gate number a comes before b in the table.
func RowBefore(a, b string) bool {
	na, sa := RowKey(a)
	nb, sb := RowKey(b)
	if na != nb {
		return na < nb
	}
	return sa < sb
}

// EarlyRow reports whether a family row runs beside the selectors (numbered below 5) rather than after the
// common arithmetic.
func EarlyRow(r *Row) bool { return RowBefore(r.Number, "5") }

// QosIndex is the pod's QoS policy for a Kind with policies: the annotation's position in QosPolicies, the
// first when the annotation is unset (the webhook's default); -1 for a Kind without policies or a value the
// webhook refuses.
func (k *Kind) QosIndex(annos map[string]string) int {
	if k.QosAnnotation == "" || len(k.QosPolicies) == 0 {
		return -1
	}
	v, ok := annos[k.QosAnnotation]
	if !ok {
		return 0
	}
	for i, p := range k.QosPolicies {
		if p == v && i < MaxQosPolicies {
			return i
		}
	}
	return -1
}
