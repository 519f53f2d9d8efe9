package engine

// Code names why a node or GPU was rejected. The values are HAMi's reason names where HAMi has one, so a
// FailedNodes string from kubectl-hami reads the same as one from HAMi.
type Code string

// Node-level codes, checked before any GPU.
const (
	NodeUnregistered       Code = "NodeUnregistered"       // no or unreadable hami.io/node-nvidia-register
	NodeDevicesNotReady    Code = "NodeDevicesNotReady"    // allocatable GPU count is 0: the device plugin is not serving
	NodeInsufficientDevice Code = "NodeInsufficientDevice" // fewer GPUs than one container asks for
	// Card-model quota (Volcano's capacity-card): kubectl-hami's names, HAMi has none.
	CardModelNotRequested Code = "CardModelNotRequested" // the node has none of the cards the pod names in volcano.sh/card.name
	QueueCardQuotaNotFit  Code = "QueueCardQuotaNotFit"  // the pod's queue has no card quota left for the node's card
)

// GPU-level codes, in HAMi v2.10's gate order.
const (
	CardNotHealth                     Code = "CardNotHealth"
	CardCordoned                      Code = "CardCordoned"
	CardTypeMismatch                  Code = "CardTypeMismatch"
	NumaNotFit                        Code = "NumaNotFit"
	CardQosPolicyMismatch             Code = "CardQosPolicyMismatch"
	CardUUIDMismatch                  Code = "CardUuidMismatch"
	CardTimeSlicingExhausted          Code = "CardTimeSlicingExhausted"
	ExclusiveDeviceAllocateConflict   Code = "ExclusiveDeviceAllocateConflict"
	ResourceQuotaNotFit               Code = "ResourceQuotaNotFit"
	CardInsufficientMemory            Code = "CardInsufficientMemory"
	CardInsufficientCore              Code = "CardInsufficientCore"
	CardComputeUnitsExhausted         Code = "CardComputeUnitsExhausted"
	CardMigTopologyInfeasible         Code = "CardMigTopologyInfeasible"
	CardNotFoundCustomFilterRule      Code = "CardNotFoundCustomFilterRule"
	AllocatedCardsInsufficientRequest Code = "AllocatedCardsInsufficientRequest"
)

// GateInfo describes one gate for documentation and help screens.
type GateInfo struct {
	Gate    string `json:"gate"`
	Code    Code   `json:"code"`
	Level   string `json:"level"` // node or gpu
	Meaning string `json:"meaning"`
	Numbers string `json:"numbers"`
}

// Gates lists every gate in evaluation order. docs/engine.md is generated from the same facts.
var Gates = []GateInfo{
	{"registered", NodeUnregistered, "node", "the node component has registered GPUs in hami.io/node-nvidia-register", "the parse error, if any"},
	{"devices-ready", NodeDevicesNotReady, "node", "the node's allocatable GPU count is above 0 (or within the handshake grace)", "allocatable count"},
	{"device-count", NodeInsufficientDevice, "node", "the node has at least as many GPUs as one container asks for", "GPUs asked, GPUs on the node"},
	{"card-model", CardModelNotRequested, "node", "with volcano.sh/card.name, the node has one of the named card models", "the node's cards, the pod's"},
	{"card-quota", QueueCardQuotaNotFit, "node", "the pod's Volcano queue has card quota (volcano.sh/card.quota) left for the node's card", "cards used of quota, cards asked"},
	{"health", CardNotHealth, "gpu", "the GPU is registered healthy", "-"},
	{"cordon", CardCordoned, "gpu", "the GPU is not listed in hami.io/device-cordon", "-"},
	{"type", CardTypeMismatch, "gpu", "the GPU type passes use-gputype/nouse-gputype and its mode matches vgpu-mode", "the GPU's type and mode, the filter"},
	{"numa", NumaNotFit, "gpu", "with numa-bind, all GPUs of a container share one NUMA node", "GPUs found on the NUMA node, GPUs asked"},
	{"qos", CardQosPolicyMismatch, "gpu", "MetaX sGPU: a used GPU takes a pod below its whole cores only when the pods sharing it have the pod's metax-tech.com/sgpu-qos-policy", "the GPU's policy, the pod's"},
	{"uuid", CardUUIDMismatch, "gpu", "the GPU passes use-gpuuuid/nouse-gpuuuid", "the filter"},
	{"slots", CardTimeSlicingExhausted, "gpu", "a vGPU slot is free", "slots used of total"},
	{"mutex", ExclusiveDeviceAllocateConflict, "gpu", "with the mutex policy, the GPU is unused", "slots used"},
	{"quota", ResourceQuotaNotFit, "gpu", "the namespace's gpumem/gpucores quota holds the pod's total so far plus this GPU", "used + asked vs limit"},
	{"memory", CardInsufficientMemory, "gpu", "free memory holds the request", "MiB asked, MiB free of total"},
	{"cores", CardInsufficientCore, "gpu", "free cores hold the request", "% asked, % free of total"},
	{"exclusive", ExclusiveDeviceAllocateConflict, "gpu", "a whole-GPU (100 % cores) request only takes an unused GPU", "slots used"},
	{"compute", CardComputeUnitsExhausted, "gpu", "a 0-core request does not land on a GPU whose cores are all taken", "% cores used of total"},
	{"mig", CardMigTopologyInfeasible, "gpu", "on a MIG GPU, a profile with enough memory has a free placement", "profile, MiB, free slices"},
	{"set", AllocatedCardsInsufficientRequest, "gpu", "enough GPUs passed every gate to fill the container's count", "GPUs found, GPUs asked"},
}

// allCodes lists every code; codeIndex maps a code to its position, the last slot holding unknown codes.
var allCodes = [...]Code{NodeUnregistered, NodeDevicesNotReady, NodeInsufficientDevice, CardModelNotRequested, QueueCardQuotaNotFit, CardNotHealth, CardCordoned,
	CardTypeMismatch, NumaNotFit, CardQosPolicyMismatch, CardUUIDMismatch, CardTimeSlicingExhausted, ExclusiveDeviceAllocateConflict,
	ResourceQuotaNotFit, CardInsufficientMemory, CardInsufficientCore, CardComputeUnitsExhausted,
	CardMigTopologyInfeasible, CardNotFoundCustomFilterRule, AllocatedCardsInsufficientRequest}

const numCodes = len(allCodes) + 1

func codeIndex(c Code) int {
	for i, k := range allCodes {
		if k == c {
			return i
		}
	}
	return len(allCodes)
}
