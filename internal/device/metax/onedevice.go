package metax

import "github.com/kubectl-hami/kubectl-hami/internal/device"

// OneDeviceRow is MetaX's customFilterRule (pkg/device/metax/device.go:156-166, run in Fit at 305-309 after
// the compute check): a GPU fails when an earlier container of the pod took another GPU of the type, so a
// pod's later containers get no GPU but the one (or none, when it took several) already given.
var OneDeviceRow = device.CustomFilterRow(device.Row{
	Number: "13d", Name: "metax-one-device",
	Meaning: "MetaX GPU: a GPU other than one an earlier container of the pod took fails",
	Numbers: "the GPU taken",
	Hint:    "put the containers' requests into one container",
	Check:   device.OneDevice("HAMi's customFilterRule gives the pod's later containers no other GPU"),
})
