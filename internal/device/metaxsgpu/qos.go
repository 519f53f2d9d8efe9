package metaxsgpu

import (
	"fmt"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// QosRow is MetaX's checkDeviceQos at v2.10.0 (pkg/device/metax/sdevice.go:361-367, 528-556): a used sGPU
// takes a request below its whole cores only when the QoS policy the device plugin registers for it
// (qosPolicy in metax-tech.com/node-gpu-devices) is unset or the pod's. The counted pods' own policies do not
// count: getNodesUsage adds their use without AddResourceUsage (pkg/scheduler/scheduler.go:776-785); only an
// earlier container of the pod itself rewrites the device's policy to the pod's (AddResourceUsage,
// sdevice.go:310-330), so a device it took passes.
var QosRow = device.Row{
	Number: "4a", Name: "qos", Code: "CardQosPolicyMismatch",
	Meaning: "MetaX sGPU only: a used sGPU takes a request below 100 % cores only when the QoS policy its device plugin registers (`qosPolicy`) is unset or the pod's `metax-tech.com/sgpu-qos-policy` (unset: `best-effort`); see [compatibility.md](compatibility.md)",
	Numbers: "the sGPU's registered policy, the pod's",
	Hint:    "use the QoS policy the used sGPUs are registered with",
	Say: func(s device.Saying) string {
		return fmt.Sprintf("%d GPU(s) are used and registered with another QoS policy (%s)", s.GPUs, QosPolicyAnnotation)
	},
	Check: qosCheck,
}

// qosCheck skips a pod whose policy the webhook refuses (the request reader reports it), passes an unused
// sGPU, a whole-GPU request or an sGPU an earlier container of the pod took, and otherwise compares the
// sGPU's registered policy with the pod's.
func qosCheck(d *device.Dev) device.Outcome {
	if d.PodQos < 0 {
		return device.Outcome{Skip: true}
	}
	if d.UsedSlots == 0 || d.AskedCores == 100 || d.TakenByPod {
		return device.Outcome{}
	}
	pod := d.Kind.QosPolicies[d.PodQos]
	if d.RegQos == "" || d.RegQos == pod {
		return device.Outcome{}
	}
	return device.Outcome{Fail: true, Detail: "registered with QoS policy " + d.RegQos + "; the pod is " + pod}
}
