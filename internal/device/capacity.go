package device

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// CapacityCount is a node's status.capacity[res] as a whole number in 1..limit; ok is false when the node has
// none, or a value that is not whole or out of range (a device plugin's count a family would turn into that
// many devices: the limit keeps a bad value from building millions).
func CapacityCount(n *corev1.Node, res string, limit int64) (int64, bool) {
	q, ok := n.Status.Capacity[corev1.ResourceName(res)]
	if !ok {
		return 0, false
	}
	v, ok := q.AsInt64()
	if !ok || v <= 0 || v > limit {
		return 0, false
	}
	return v, true
}

// MaxCapacityDevices bounds the devices a family derives from a node's capacity.
const MaxCapacityDevices = 1024

// CapacityDevices is the devices of a family whose device plugin registers none but a count in the node's
// capacity (HAMi's GetNodeDevices for MetaX, Enflame, Kunlun): capacity[countRes] devices named
// <node>-<infix>-<i>, each a copy of template with its ID and Index set; nil without a usable count.
func CapacityDevices(n *corev1.Node, countRes, infix string, template codec.DeviceInfo) []codec.DeviceInfo {
	count, ok := CapacityCount(n, countRes, MaxCapacityDevices)
	if !ok {
		return nil
	}
	out := make([]codec.DeviceInfo, count)
	for i := range out {
		out[i] = template
		out[i].ID, out[i].Index = fmt.Sprintf("%s-%s-%d", n.Name, infix, i), i
	}
	return out
}
