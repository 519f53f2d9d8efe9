package metaxsgpu

import (
	"fmt"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// QosRow is MetaX's checkDeviceQos (pkg/device/metax/sdevice.go): a used sGPU takes a request below its whole
// cores only when no counted pod of another policy shares it.
var QosRow = device.Row{
	Number: "4a", Name: "qos", Code: "CardQosPolicyMismatch",
	Meaning: "MetaX sGPU only: a used sGPU takes a request below 100 % cores only when the counted pods sharing it have the pod's `metax-tech.com/sgpu-qos-policy` (unset: `best-effort`); see [compatibility.md](compatibility.md)",
	Numbers: "the sharers' policy, the pod's",
	Hint:    "use the QoS policy of the pods already on the GPU",
	Say: func(s device.Saying) string {
		return fmt.Sprintf("%d GPU(s) are shared by pods of another QoS policy (%s)", s.GPUs, QosPolicyAnnotation)
	},
	Check: qosCheck,
}

// qosCheck skips a pod whose policy the webhook refuses (the request reader reports it), passes an unused
// sGPU or a whole-GPU request, and fails on the first other policy among the sharers.
func qosCheck(d *device.Dev) device.Outcome {
	if d.PodQos < 0 {
		return device.Outcome{Skip: true}
	}
	if d.UsedSlots == 0 || d.AskedCores == 100 {
		return device.Outcome{}
	}
	policies := d.Kind.QosPolicies
	for i, n := range d.Sharers {
		if n > 0 && i != d.PodQos && i < len(policies) {
			return device.Outcome{Fail: true, Detail: "shared by " + policies[i] + " pods; the pod is " + policies[d.PodQos]}
		}
	}
	return device.Outcome{}
}
