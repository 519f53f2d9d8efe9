package engine

import (
	"fmt"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Level says where a gate rules: on a whole node, on one GPU, or (for a routing failure) on the pod itself.
type Level string

// The levels of the gate table.
const (
	LevelPod  Level = "pod"
	LevelNode Level = "node"
	LevelGPU  Level = "gpu"
)

// Gate is one row of the gate table: a check, the code it fails with, and everything the surfaces say about
// it. The table is the one home of these facts: the fit walk's order (GateRank), the extender's
// FailedAndUnresolvableNodes, the explanation's sentence, the help screen and docs/engine.md (rendered from
// it by TestGateTableDoc) all read it. Adding a gate is a row here, the check in the walk, and its tests.
type Gate struct {
	// Number is the gate's place in docs/engine.md: r routing, k1-k5 kube-scheduler's checks in its default
	// profile's filter order (gates of every verdict where the engine answers alone), n1-n5 node
	// gates, 1-14 the GPU gates in HAMi's order.
	Number string `json:"number"`
	Name   string `json:"gate"`
	Code   Code   `json:"code"`
	Level  Level  `json:"level"`
	// Unresolvable: preempting pods cannot make the gate pass, so kube-scheduler need not try
	// (the extender's FailedAndUnresolvableNodes).
	Unresolvable bool `json:"unresolvable"`
	// Meaning says what passes the gate; Numbers what a failure reports. Markdown: docs/engine.md shows them.
	Meaning string `json:"meaning"`
	Numbers string `json:"numbers"`
	// Hint is what a user can change when the gate fails.
	Hint string `json:"hint"`
	// Family is the registry name of the family whose package contributes the row (device.Row); "" for the
	// engine's own rows.
	Family string `json:"family,omitempty"`
	// say writes the explanation's sentence for the code, with the aggregate's numbers; nil when an earlier
	// row of the same code says it, or when the code's sentence is built where it is decided (kube checks).
	// A family row may carry its own, which the code's first row defers to for that row's failures.
	say func(a *aggregate, s saying) string
}

// saying is what a sentence draws on besides the aggregate.
type saying struct {
	nodes int // nodes this code decided; 0 for a GPU-level reason that decided none
	gpus  int // GPUs that failed with this code
	e     *example
	few   []string // a few nodes with this node-level code
	req   *PodRequest
	q     QuotaStatus
}

// where is "node N, GPU i" of the example.
func (s saying) where() string { return fmt.Sprintf("node %s, GPU %d", s.e.node, s.e.gpu) }

// names lists a few nodes with this node-level code.
func (s saying) names() string { return strings.Join(s.few, ", ") }

// Gates is the gate table in evaluation order: the routing check, kube-scheduler's checks (every pod where the
// engine answers alone; another scheduler's pods get only these), the node gates, then the GPU gates in HAMi
// v2.10's order, the registered families' own rows (device.Kind.Rows) at their numbers.
var Gates = withFamilyRows(engineGates, registeredFamilyRows())

// engineGates are the engine's own rows: those every type runs and the building blocks a Kind opts into.
var engineGates = []Gate{
	{Number: "r", Name: "routing", Code: SchedulerNotHAMi, Level: LevelPod, Unresolvable: true,
		Meaning: "a pod asking for HAMi's gpumem, gpumem-percentage or gpucores is addressed to HAMi's profile", Numbers: "the resources, the pod's scheduler",
		Hint: "install HAMi's admission webhook (or set spec.schedulerName to HAMi's profile) and recreate the pod"},
	{Number: "k1", Name: "node-unschedulable", Code: KubeUnschedulable, Level: LevelNode, Unresolvable: true,
		Meaning: "the node is not cordoned (`spec.unschedulable`), or the pod tolerates it", Numbers: "-",
		Hint: "uncordon the node (kubectl uncordon)", say: sayKube},
	{Number: "k2", Name: "node-name", Code: KubeNodeName, Level: LevelNode, Unresolvable: true,
		Meaning: "`spec.nodeName`, if set, names the node", Numbers: "the node asked for",
		Hint: "drop or correct spec.nodeName", say: sayKube},
	{Number: "k3", Name: "taint-toleration", Code: KubeTaint, Level: LevelNode, Unresolvable: true,
		Meaning: "the pod tolerates every NoSchedule and NoExecute taint of the node", Numbers: "the taint",
		Hint: "add a toleration, or remove the taint", say: sayKube},
	{Number: "k4", Name: "node-affinity", Code: KubeNodeAffinity, Level: LevelNode, Unresolvable: true,
		Meaning: "the node matches the pod's `nodeSelector` and required node affinity", Numbers: "the selector",
		Hint: "change the pod's nodeSelector or affinity, or label the node", say: sayKube},
	{Number: "k5", Name: "resources-fit", Code: KubeResourcesFit, Level: LevelNode,
		Meaning: "the node's `allocatable` minus its pods' requests holds the pod's requests (whole devices and MIG resources included; for HAMi's pods, every resource but HAMi's own); a node whose `allocatable` has no `pods` count is not checked for it", Numbers: "resource, requested, used, allocatable",
		Hint: "ask for less, or free the node", say: sayKube},

	{Number: "n1", Name: "registered", Code: NodeUnregistered, Level: LevelNode, Unresolvable: true,
		Meaning: "the node registers devices: `hami.io/node-nvidia-register`, or another family's register annotation or capacity, is present and readable", Numbers: "the parse error, naming the key and position",
		Hint: "run HAMi's device plugin (or kubectl hami agent) on the node", say: sayUnregistered},
	{Number: "n2", Name: "devices-ready", Code: NodeDevicesNotReady, Level: LevelNode, Unresolvable: true,
		Meaning: "allocatable `nvidia.com/gpu` > 0, or a handshake HAMi's registration pass keeps: a `Requesting_` stamp younger than 60 s, or none, `Reported` or `Deleted_` (HAMi stamps `Requesting_<now>` then); only a stamp 60 s old fails", Numbers: "allocatable count, and when HAMi's grace ended",
		Hint: "check the device plugin pod on the node", say: sayDevicesNotReady},
	{Number: "n3", Name: "device-count", Code: NodeInsufficientDevice, Level: LevelNode, Unresolvable: true,
		Meaning: "the node has at least as many GPUs as the container being fitted asks for", Numbers: "GPUs asked, GPUs on the node",
		Hint: "ask for fewer GPUs per container", say: sayInsufficientDevice},
	{Number: "n4", Name: "card-model", Code: CardModelNotRequested, Level: LevelNode,
		Meaning: "with `volcano.sh/card.name` and a Volcano queue, the node has one of the named card models ([card-quota.md](card-quota.md))", Numbers: "the node's cards, the pod's",
		Hint: "name another card model in volcano.sh/card.name", say: sayCardModel},
	{Number: "n5", Name: "card-quota", Code: QueueCardQuotaNotFit, Level: LevelNode,
		Meaning: "the pod's queue has `volcano.sh/card.quota` left for the node's card", Numbers: "cards used of quota, cards asked",
		Hint: "raise the queue's volcano.sh/card.quota, or wait for its pods to finish", say: sayCardQuota},

	{Number: "1", Name: "health", Code: CardNotHealth, Level: LevelGPU,
		Meaning: "the GPU is registered healthy (absent `health` in JSON is unhealthy)", Numbers: "-",
		Hint: "repair the GPU; the device plugin re-registers it healthy", say: sayNotHealth},
	{Number: "1a", Name: "health-unhealthy", Code: CardUnhealthy, Level: LevelGPU,
		Meaning: "MetaX sGPU: gate 1 under the family's own reason (`sdevice.go`'s `CardUnhealthy`)", Numbers: "-",
		Hint: "repair the GPU; the device plugin re-registers it healthy", say: sayNotHealth},
	{Number: "2", Name: "cordon", Code: CardCordoned, Level: LevelGPU,
		Meaning: "NVIDIA only: the GPU is not in `hami.io/device-cordon`; every other family's `Fit` ignores the annotation", Numbers: "-",
		Hint: "uncordon the GPU (remove it from hami.io/device-cordon)", say: sayCordoned},
	{Number: "3", Name: "type", Code: CardTypeMismatch, Level: LevelGPU, Unresolvable: true,
		Meaning: "type filters and `vgpu-mode` match", Numbers: "which filter",
		Hint: "drop or widen nvidia.com/use-gputype, nouse-gputype or vgpu-mode", say: sayTypeMismatch},
	{Number: "4", Name: "numa", Code: NumaNotFit, Level: LevelGPU,
		Meaning: "with `nvidia.com/numa-bind`, a GPU that passed gates 1-3 on another NUMA node restarts the set; GPUs of a dropped set get this code", Numbers: "GPUs found, GPUs asked",
		Hint: "drop nvidia.com/numa-bind, or ask for fewer GPUs", say: sayNuma},
	{Number: "5", Name: "uuid", Code: CardUUIDMismatch, Level: LevelGPU, Unresolvable: true,
		Meaning: "UUID filters match", Numbers: "which filter",
		Hint: "drop or widen nvidia.com/use-gpuuuid or nouse-gpuuuid", say: sayUUIDMismatch},
	{Number: "6", Name: "slots", Code: CardTimeSlicingExhausted, Level: LevelGPU,
		Meaning: "a vGPU slot is free", Numbers: "free slots of total",
		Hint: "wait for a pod on the GPU to finish, or raise the device plugin's deviceSplitCount", say: saySlots},
	{Number: "7", Name: "mutex", Code: ExclusiveDeviceAllocateConflict, Level: LevelGPU,
		Meaning: "with the mutex policy the GPU is unused", Numbers: "slots used",
		Hint: "ask for less than 100% cores, or wait for an unused GPU", say: sayExclusive},
	{Number: "8", Name: "quota", Code: ResourceQuotaNotFit, Level: LevelGPU,
		Meaning: "namespace used + the pod's total so far + this GPU fits `limits.<mem>` and `limits.<cores>`", Numbers: "MiB or % needed, left, limit",
		Hint: "raise the namespace's ResourceQuota limits.nvidia.com/gpumem or gpucores, or ask for less", say: sayQuota},
	{Number: "9", Name: "memory", Code: CardInsufficientMemory, Level: LevelGPU,
		Meaning: "free memory holds the request (percent resolved on this GPU)", Numbers: "MiB needed, free, total",
		Hint: "ask for less GPU memory, or wait for memory to free", say: sayMemory},
	{Number: "10", Name: "cores", Code: CardInsufficientCore, Level: LevelGPU,
		Meaning: "free cores hold the request", Numbers: "% needed, free, total",
		Hint: "ask for fewer cores", say: sayCores},
	{Number: "11", Name: "exclusive", Code: ExclusiveDeviceAllocateConflict, Level: LevelGPU,
		Meaning: "a 100 %-core request on a 100-core GPU needs it unused", Numbers: "slots used",
		Hint: "ask for less than 100% cores, or wait for an unused GPU"},
	{Number: "12", Name: "compute", Code: CardComputeUnitsExhausted, Level: LevelGPU,
		Meaning: "a 0-core request does not land on a GPU whose cores are all taken", Numbers: "% free, total",
		Hint: "ask for some cores, or wait for cores to free", say: sayCompute},
	{Number: "13", Name: "mig", Code: CardMigTopologyInfeasible, Level: LevelGPU,
		Meaning: "on a MIG GPU, the smallest profile with enough memory has a free placement", Numbers: "MiB needed",
		Hint: "ask for a smaller profile's memory, or wait for MIG slices to free", say: sayMigTopology},
	{Number: "14", Name: "set", Code: AllocatedCardsInsufficientRequest, Level: LevelGPU,
		Meaning: "enough GPUs passed to fill the count", Numbers: "GPUs found, GPUs asked",
		Hint: "ask for fewer GPUs, or less of each", say: saySet},
	{Number: "14a", Name: "interconnect", Code: NumaNotFit, Level: LevelGPU,
		Meaning: "Kunlun: the XPUs that passed hold a set of the count asked for (1, 2, 4 or 8) that HAMi's interconnect rule accepts: within one wing, a cross-linked pair, a group of four spanning both wings, all eight. AWS Neuron: several devices are one contiguous run of unused devices, from any device on Inferentia (inf*), on other instances only 4, 8 or 16 from a multiple of the count", Numbers: "devices that passed, devices asked",
		Hint: "ask for a count the rule places (Kunlun: 1, 2, 4 or 8; Trainium: 1, 4, 8 or 16), or wait for a connected set or run to free"},
}

// familyRow is a row a family contributes, with the family's name.
type familyRow struct {
	family string
	row    *device.Row
}

// registeredFamilyRows lists the own rows of every registered family's default Kinds, NVIDIA's included, once
// each by name.
func registeredFamilyRows() []familyRow {
	var out []familyRow
	seen := map[string]bool{}
	add := func(k *device.Kind) {
		for i := range k.Rows {
			r := &k.Rows[i]
			if (r.Check != nil || r.NodeCheck != nil || r.Resolve != nil) && !seen[r.Name] {
				seen[r.Name] = true
				out = append(out, familyRow{family: k.Vendor, row: r})
			}
		}
	}
	for _, k := range DefaultConfig().Kinds() {
		add(&k)
	}
	return out
}

// withFamilyRows inserts the families' rows into the engine's table, each before the first GPU row numbered
// after it; a node row ("n3a") before the first node row numbered after it, or the first GPU row.
func withFamilyRows(base []Gate, rows []familyRow) []Gate {
	out := append([]Gate(nil), base...)
	for _, fr := range rows {
		g := gateOfRow(fr.family, fr.row)
		at := len(out)
		for i := range out {
			if g.Level == LevelNode && (out[i].Level == LevelGPU || out[i].Level == LevelNode && out[i].Number > g.Number) ||
				g.Level == LevelGPU && out[i].Level == LevelGPU && device.RowBefore(g.Number, out[i].Number) {
				at = i
				break
			}
		}
		out = append(out[:at], append([]Gate{g}, out[at:]...)...)
	}
	return out
}

// gateOfRow is a family row as a row of the table.
func gateOfRow(family string, r *device.Row) Gate {
	g := Gate{Number: r.Number, Name: r.Name, Code: Code(r.Code), Level: LevelGPU, Unresolvable: r.Unresolvable,
		Meaning: r.Meaning, Numbers: r.Numbers, Hint: r.Hint, Family: family}
	if r.NodeCheck != nil || r.Resolve != nil {
		g.Level = LevelNode
	}
	if say := r.Say; say != nil {
		node := g.Level == LevelNode
		g.say = func(_ *aggregate, s saying) string {
			where := s.where()
			if node {
				where = "node " + s.e.node
			}
			return say(device.Saying{GPUs: s.gpus, Detail: s.e.detail, Where: where})
		}
	}
	return g
}

// gateNamed is the row of a gate name; nil for a name the table does not know.
func gateNamed(name string) *Gate { return gateByName[name] }

// deferSay is the sentence of the example's own row when it is not the code's first row and carries one (a
// family row sharing a code); "" otherwise.
func deferSay(a *aggregate, s saying, first *Gate) string {
	if s.e == nil {
		return ""
	}
	if g := gateNamed(s.e.gate); g != nil && g != first && g.Code == first.Code && g.say != nil {
		return g.say(a, s)
	}
	return ""
}

// numCodes sizes the per-code arrays of an aggregate: room for every code of the table and one slot for
// codes the table does not know. TestGateTable keeps it large enough.
const numCodes = 32

// tableCodes lists each code of the table once, in first-row order; gateOfCode is its first row, the engine's
// own row where one has the code (a family row that shares it, as Enflame's gcu-used at 4b shares gate 7's,
// defers to it: deferSay).
var (
	tableCodes []Code
	gateOfCode = map[Code]*Gate{}
	gateByName = map[string]*Gate{}
)

func init() {
	for i := range Gates {
		g := &Gates[i]
		gateByName[g.Name] = g
		if gateOfCode[g.Code] == nil {
			tableCodes = append(tableCodes, g.Code)
		}
		if first := gateOfCode[g.Code]; first == nil || first.Family != "" && g.Family == "" {
			gateOfCode[g.Code] = g
		}
	}
}

// codeIndex maps a code to its slot in an aggregate's arrays; unknown codes share the last.
func codeIndex(c Code) int {
	for i, k := range tableCodes {
		if sameCode(k, c) {
			return i
		}
	}
	return numCodes - 1
}

// GateOf is the first gate row of a code; nil for a code the table does not know.
func GateOf(c Code) *Gate { return gateOfCode[c] }

// Unresolvable reports whether preempting pods cannot clear the code.
func Unresolvable(c Code) bool {
	g := gateOfCode[c]
	return g != nil && g.Unresolvable
}

// GateRank is a code's position in the gate order (its first row's, GateOf); later gates mean a pod came
// closer to fitting. kube-scheduler's checks rank before every gate of HAMi or the card quota; unknown codes
// last.
func GateRank(c Code) int {
	first := gateOfCode[c]
	for i := range Gates {
		if &Gates[i] == first {
			return i
		}
	}
	return len(Gates)
}

// The sentences of the explanation, one per code, numbers from the aggregate.

// sayKube is a kube-scheduler check's sentence: the nodes it rejects and one node's reason.
func sayKube(_ *aggregate, s saying) string {
	names := s.names()
	if more := s.nodes - len(s.few); more > 0 {
		names += fmt.Sprintf(" and %d more", more)
	}
	return fmt.Sprintf("kube-scheduler rejects %s before HAMi's gates (e.g. %s: %s)", names, s.e.node, s.e.detail)
}

func sayUnregistered(_ *aggregate, s saying) string {
	if s.req.DeviceWord() != "GPU" {
		return "no device plugin registered any devices on " + s.names()
	}
	return "no GPUs registered in hami.io/node-nvidia-register on " + s.names()
}

func sayDevicesNotReady(_ *aggregate, s saying) string {
	return "allocatable GPUs are 0 (the device plugin is not serving) on " + s.names()
}

func sayInsufficientDevice(_ *aggregate, s saying) string {
	// e is the node this gate rejects with the most GPUs: larger nodes failed later gates.
	if s.nodes == 1 {
		return fmt.Sprintf("a container asks for %d GPUs on one node; %s has %d", s.e.need, s.e.node, s.e.have)
	}
	return fmt.Sprintf("a container asks for %d GPUs on one node; these nodes have at most %d (%s)", s.e.need, s.e.have, s.e.node)
}

func sayCardModel(a *aggregate, s saying) string {
	var alts []string
	if a.card != nil {
		for _, x := range a.card.Alternatives {
			alts = append(alts, x.Card)
		}
	}
	return fmt.Sprintf("the pod names %s in volcano.sh/card.name; these nodes have other cards: %s", strings.Join(alts, "|"), s.names())
}

func sayCardQuota(a *aggregate, _ saying) string { return strings.Join(a.card.Lines(), "; ") }

func sayNotHealth(_ *aggregate, s saying) string {
	return fmt.Sprintf("%d GPU(s) are registered unhealthy", s.gpus)
}

func sayCordoned(_ *aggregate, s saying) string {
	return fmt.Sprintf("%d GPU(s) are cordoned in hami.io/device-cordon", s.gpus)
}

func sayTypeMismatch(a *aggregate, s saying) string {
	return fmt.Sprintf("no GPU here passes %s; types seen: %s", filterText(s.req, false), strings.Join(a.types, ", "))
}

func sayUUIDMismatch(_ *aggregate, s saying) string {
	return fmt.Sprintf("%d GPU(s) are excluded by the UUID filter (%s)", s.gpus, filterText(s.req, true))
}

func saySlots(_ *aggregate, s saying) string {
	return fmt.Sprintf("%d GPU(s) have every vGPU slot taken (%d of %d on %s)", s.gpus, s.e.total, s.e.total, s.where())
}

func sayExclusive(_ *aggregate, s saying) string {
	return fmt.Sprintf("the pod needs an unused GPU (100%% cores or the mutex policy) but %d GPU(s) are already shared", s.gpus)
}

func sayQuota(a *aggregate, s saying) string {
	if a.quota == nil {
		return "the namespace quota is exhausted"
	}
	// The check fails on the running total of the GPUs chosen so far; say the pod's whole need.
	need := a.quota.Need
	if mem, cores, ok := podTotals(s.req); a.quota.Unit == "MiB" && ok {
		need = max(need, mem)
	} else if a.quota.Unit == "%" {
		need = max(need, cores)
	}
	return fmt.Sprintf("the pod needs %d %s in total but namespace %s has %d %s left of %d (%s)",
		need, a.quota.Unit, s.q.Namespace, a.quota.Have, a.quota.Unit, a.quota.Total, a.quota.Detail)
}

func sayMemory(_ *aggregate, s saying) string {
	return fmt.Sprintf("needs %d MiB on one GPU; the most free on any GPU that passes the earlier gates is %d MiB of %d (%s)",
		s.e.need, s.e.have, s.e.total, s.where())
}

func sayCores(_ *aggregate, s saying) string {
	if u := coresUnitOf(s.req); u != "" {
		return fmt.Sprintf("needs %d %s on one GPU; the most free is %d of %d (%s)", s.e.need, u, s.e.have, s.e.total, s.where())
	}
	return fmt.Sprintf("needs %d%% cores on one GPU; the most free is %d%% of %d%% (%s)", s.e.need, s.e.have, s.e.total, s.where())
}

func sayCompute(_ *aggregate, s saying) string {
	return fmt.Sprintf("%d GPU(s) have all their cores allocated and a 0-core request does not go there", s.gpus)
}

// sayMigTopology is gate 13's sentence. HAMi gives every MIG rejection this one code
// (pkg/device/nvidia/device.go:812-821); the detail says whether some profile had enough memory.
func sayMigTopology(_ *aggregate, s saying) string {
	if s.e != nil && s.e.detail == migNoProfile {
		return fmt.Sprintf("no MIG profile offers %d MiB (%s)", s.e.need, s.where())
	}
	return fmt.Sprintf("no free MIG placement for a profile of at least %d MiB (%s)", s.e.need, s.where())
}

func sayNuma(_ *aggregate, s saying) string {
	if s.e.gate == "interconnect" {
		return fmt.Sprintf("%s (node %s)", s.e.detail, s.e.node)
	}
	return fmt.Sprintf("numa-bind needs %d GPUs on one NUMA node; at most %d fit together (node %s)", s.e.need, s.e.have, s.e.node)
}

func saySet(_ *aggregate, s saying) string {
	return fmt.Sprintf("needs %d GPUs on one node; at most %d pass every gate together (node %s)", s.e.need, s.e.have, s.e.node)
}
