package engine

// Code names why a node or GPU was rejected. The values are HAMi's reason names where HAMi has one, so a
// FailedNodes string from kubectl-hami reads the same as one from HAMi.
type Code string

// Node-level codes, checked before any GPU.
const (
	NodeUnregistered       Code = "NodeUnregistered"       // no or unreadable hami.io/node-nvidia-register
	NodeDevicesNotReady    Code = "NodeDevicesNotReady"    // allocatable GPU count is 0: the device plugin is not serving
	NodeInsufficientDevice Code = "NodeInsufficientDevice" // fewer GPUs than one container asks for
	// ModeNotFit is Ascend's node row vnpu-core (a family row, device.Row.NodeCheck): the pod asks for hami-core
	// where the node does not run it (pkg/device/ascend/device.go:469-473 at v2.10.0).
	ModeNotFit Code = "ModeNotFit"
	// Card-model quota (Volcano's capacity-card): kubectl-hami's names, HAMi has none.
	CardModelNotRequested Code = "CardModelNotRequested" // the node has none of the cards the pod names in volcano.sh/card.name
	QueueCardQuotaNotFit  Code = "QueueCardQuotaNotFit"  // the pod's queue has no card quota left for the node's card
)

// GPU-level codes, in HAMi v2.10's gate order.
const (
	CardNotHealth                     Code = "CardNotHealth"
	CardUnhealthy                     Code = "CardUnhealthy" // MetaX sGPU's name for CardNotHealth (device.Kind.UnhealthyCode)
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
