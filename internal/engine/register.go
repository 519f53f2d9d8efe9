package engine

// The register reader of every type but the one whose annotation buildNode reads first (NVIDIA's): the
// node annotation or the Node-derived devices of each Kind, with the family's own parser and health check.

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// addFamilyDevices reads the register annotation of every device type but the main one (NVIDIA's, whose
// annotation buildNode reads first) and appends those devices to the node. A node that registers any type is
// registered: a DCU-only node is not "unregistered" because it has no NVIDIA annotation.
func (c *Cluster) addFamilyDevices(n *corev1.Node, node *Node, bad reportFunc) {
	for k := range c.kinds {
		kind := &c.kinds[k]
		if mainKind(kind) {
			continue
		}
		var devs []codec.DeviceInfo
		field := "status.capacity[" + kind.Cores + "]"
		if kind.NodeDevices != nil {
			if devs = kind.NodeDevices(n); len(devs) == 0 {
				continue
			}
		} else {
			reg, ok := n.Annotations[kind.Register]
			if !ok {
				continue
			}
			field = "metadata.annotations[" + kind.Register + "]"
			if kind.Serving != nil {
				if f, problem := kind.Serving(n); problem != "" {
					bad(f, "%s", problem)
					continue
				}
			}
			var err error
			parse := codec.ParseDeviceRegister
			if kind.ParseRegister != nil {
				parse = kind.ParseRegister
			}
			if devs, err = parse(kind.Register, reg); err != nil {
				bad(field, "%v; its %ss are not counted", err, kind.Word)
				continue
			}
		}
		if !node.Registered {
			node.Registered, node.RegisterError = true, ""
		}
		for _, d := range devs {
			if _, dup := node.uuidIndex[d.ID]; dup {
				bad(field, "%s %s is registered twice; the second entry is ignored", kind.Word, d.ID)
				continue
			}
			node.uuidIndex[d.ID] = len(node.GPUs)
			node.GPUs = append(node.GPUs, GPU{
				UUID: d.ID, Index: d.Index, Type: d.Type, Numa: d.Numa, Mode: ModeHamiCore, Healthy: d.Health,
				Slots: d.Count, TotalMem: d.Devmem, TotalCores: d.Devcore, reg: len(node.GPUs),
				Device: kind.Name, Kind: uint8(k), regQos: d.QosPolicy, networkID: d.NetworkID,
			})
		}
	}
}
