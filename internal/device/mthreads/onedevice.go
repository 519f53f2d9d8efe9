package mthreads

import (
	"fmt"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// OneDeviceRow is Mthreads' customFilterRule ("needs all devices on a device"): a pod's containers share one
// GPU, so a GPU other than the one an earlier container of the pod took fails.
var OneDeviceRow = device.Row{
	Number: "13b", Name: "one-device", Code: "CardNotFoundCustomFilterRule",
	Meaning: "Moore Threads: a pod's containers share one GPU, so a GPU other than the one an earlier container took fails",
	Numbers: "the GPU taken",
	Hint:    "put the containers' requests into one container, or fit them on one GPU",
	Say: func(s device.Saying) string {
		return fmt.Sprintf("%d device(s): %s (%s)", s.GPUs, s.Detail, s.Where)
	},
	Check: func(d *device.Dev) device.Outcome {
		if t := d.OtherTaken(); t != "" {
			return device.Outcome{Fail: true, Detail: "an earlier container of the pod took " + t + "; HAMi gives a pod's " + d.Kind.Name + " containers one device"}
		}
		return device.Outcome{}
	},
}
