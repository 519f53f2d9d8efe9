package mthreads

import "github.com/kubectl-hami/kubectl-hami/internal/device"

// OneDeviceRow is Mthreads' customFilterRule ("needs all devices on a device"): a pod's containers share one
// GPU, so a GPU other than the one an earlier container of the pod took fails.
var OneDeviceRow = device.CustomFilterRow(device.Row{
	Number: "13b", Name: "one-device",
	Meaning: "Moore Threads: a pod's containers share one GPU, so a GPU other than the one an earlier container took fails",
	Numbers: "the GPU taken",
	Hint:    "put the containers' requests into one container, or fit them on one GPU",
	Check:   device.OneDevice("HAMi gives a pod's Mthreads containers one device"),
})
