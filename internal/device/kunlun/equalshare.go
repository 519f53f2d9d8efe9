package kunlun

import (
	"strconv"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// EqualShareRow is Kunlun vXPU's FitVXPU: a device is cut in equal slices, so a used XPU takes only a request
// of the memory its users hold on average.
var EqualShareRow = device.CustomFilterRow(device.Row{
	Number: "13c", Name: "equal-share",
	Meaning: "Kunlun vXPU: a used XPU takes only requests of the slice size it is already cut in",
	Numbers: "MiB asked, the XPU's slice",
	Hint:    "ask for the slice size of the used XPUs (24, 48 or 96 GiB), or wait for an unused XPU",
	Check:   equalShare,
})

func equalShare(d *device.Dev) device.Outcome {
	o := device.Outcome{Need: d.MemNeed, Unit: "MiB"}
	if d.UsedSlots > 0 {
		o.Have = d.UsedMem / int64(d.UsedSlots)
		if o.Have != d.MemNeed {
			o.Fail, o.Detail = true, "the "+d.Kind.Word+" is cut in "+strconv.FormatInt(o.Have, 10)+" MiB slices; it takes only requests of that size"
		}
	}
	return o
}
