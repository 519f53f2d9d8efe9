package ascend

import (
	"strconv"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// NodeVNPUCoreAnnotation is the node annotation saying whether the node's NPUs run hami-core (soft split):
// "true" or anything else (VNPUNodeSelectorAnnotation, pkg/device/ascend/device.go:48 at v2.10.0).
const NodeVNPUCoreAnnotation = "hami-vnpu-core"

// VNPUCoreRow is the node row of HAMi v2.10.0's Ascend Fit (pkg/device/ascend/device.go:452-473): a pod with
// huawei.com/vnpu-mode: hami-core fits only on a node that supports hami-core, which the node's hami-vnpu-core
// annotation says ("true"; any other value: no), and where the node has none, the vnpus section's
// hamiVnpuCore (byDefault). The check comes before the NPU loop, so the node's reason is "1/N ModeNotFit"
// whatever its NPUs are; the device count is checked before it (fitInDevices, pkg/scheduler/score.go:98-105).
func VNPUCoreRow(byDefault bool) device.Row {
	return device.Row{
		Number: "n3a", Name: "vnpu-core", Code: "ModeNotFit", Unresolvable: true,
		Meaning: "Ascend: a pod with `huawei.com/vnpu-mode: hami-core` is on a node whose `hami-vnpu-core` annotation is \"true\" (without it, the vnpus section's `hamiVnpuCore`, false in the chart)",
		Numbers: "the node's annotation",
		Hint:    "annotate the node hami-vnpu-core=true where its NPUs run hami-core, or drop huawei.com/vnpu-mode: hami-core",
		Say: func(s device.Saying) string {
			return "the pod asks for hami-core (huawei.com/vnpu-mode), which these nodes' NPUs do not run (e.g. " + s.Where + ": " + s.Detail + ")"
		},
		NodeCheck: func(node, pod map[string]string) device.Outcome {
			if pod[VNPUModeAnnotation] != VNPUModeHamiCore {
				return device.Outcome{Skip: true}
			}
			v, ok := node[NodeVNPUCoreAnnotation]
			switch {
			case ok && v == "true", !ok && byDefault:
				return device.Outcome{}
			case ok:
				return device.Outcome{Fail: true, Detail: "the node's " + NodeVNPUCoreAnnotation + " annotation is " + strconv.Quote(v) + ", not \"true\": its NPUs do not run hami-core"}
			}
			return device.Outcome{Fail: true, Detail: "the node has no " + NodeVNPUCoreAnnotation + " annotation and hamiVnpuCore is false: its NPUs do not run hami-core"}
		},
	}
}
