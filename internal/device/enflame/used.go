package enflame

import (
	"fmt"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// UsedRow is the whole-GCU Fit's `dev.Used > 0` check (pkg/device/enflame/gcu.go:163-167), right after health
// and type: a GCU any pod (or an earlier container of the pod) uses is ExclusiveDeviceAllocateConflict, before
// the slot count would say CardTimeSlicingExhausted.
var UsedRow = device.Row{
	Number: "4b", Name: "gcu-used", Code: "ExclusiveDeviceAllocateConflict",
	Meaning: "Enflame GCU: the GCU is unused (a GCU is taken whole)",
	Numbers: "slots used",
	Hint:    "wait for the pod on the GCU to finish",
	Say: func(s device.Saying) string {
		return fmt.Sprintf("%d GCU(s) are in use and a GCU is never shared (%s)", s.GPUs, s.Where)
	},
	Check: func(d *device.Dev) device.Outcome {
		if d.UsedSlots > 0 {
			return device.Outcome{Fail: true, Need: 0, Have: int64(d.UsedSlots), Unit: "slots used", Detail: fmt.Sprintf("used by %d container(s)", d.UsedSlots)}
		}
		return device.Outcome{Have: int64(d.UsedSlots), Unit: "slots used"}
	},
}
