package kunlun

import "github.com/kubectl-hami/kubectl-hami/internal/device"

// Codes of HAMi's Kunlun Fit failures (pkg/device/common).
const (
	numaNotFit        = "NumaNotFit"
	uuidMismatch      = "CardUuidMismatch"
	exclusiveConflict = "ExclusiveDeviceAllocateConflict"
)

// WholeFitFailure is HAMi v2.10.0's whole-XPU Fit failure (pkg/device/kunlun/device.go:201-210): graghSelect
// found no set, so the node's reason is the XPUs whose UUID the pod's selectors refuse (the UUID is checked
// first, 190-198: an unhealthy XPU counts too), else one NumaNotFit, whatever else kept the other XPUs out.
func WholeFitFailure(first []device.Failure, _ int) (string, int) {
	if n := count(first, func(f device.Failure) bool { return f.UUIDRefused || f.Code == uuidMismatch }); n > 0 {
		return uuidMismatch, n
	}
	return numaNotFit, 1
}

// VFitFailure is the vXPU Fit failure (pkg/device/kunlun/vdevice.go:257-275): with the mutex policy the used
// XPUs (ExclusiveDeviceAllocateConflict), else the UUID mismatches, else one NumaNotFit.
func VFitFailure(first []device.Failure, asked int) (string, int) {
	if n := count(first, func(f device.Failure) bool { return f.Gate == "mutex" }); n > 0 {
		return exclusiveConflict, n
	}
	return WholeFitFailure(first, asked)
}

func count(first []device.Failure, is func(device.Failure) bool) int {
	n := 0
	for _, f := range first {
		if is(f) {
			n++
		}
	}
	return n
}
