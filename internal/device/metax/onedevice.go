package metax

import (
	"fmt"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// OneDeviceRow is MetaX's customFilterRule (pkg/device/metax/device.go:156-166, run in Fit at 305-309 after
// the compute check): a GPU fails when an earlier container of the pod took another GPU of the type, so a
// pod's later containers get no GPU but the one (or none, when it took several) already given.
var OneDeviceRow = device.Row{
	Number: "13d", Name: "metax-one-device", Code: "CardNotFoundCustomFilterRule",
	Meaning: "MetaX GPU: a GPU other than one an earlier container of the pod took fails",
	Numbers: "the GPU taken",
	Hint:    "put the containers' requests into one container",
	Say: func(s device.Saying) string {
		return fmt.Sprintf("%d device(s): %s (%s)", s.GPUs, s.Detail, s.Where)
	},
	Check: func(d *device.Dev) device.Outcome {
		if t := d.OtherTaken(); t != "" {
			return device.Outcome{Fail: true, Detail: "an earlier container of the pod took " + t + "; HAMi's customFilterRule gives the pod's later containers no other GPU"}
		}
		return device.Outcome{}
	},
}
