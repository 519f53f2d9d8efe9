package engine

// The register reader's loop over every type but the one whose annotation buildNode reads first (NVIDIA's):
// each Kind's devices read by its family's reader (device.Kind.ReadRegister: the node annotation, the
// Node-derived devices, the family's own parser and health check).

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
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
		_, _, _, read, _ := kind.Readers()
		devs, field, ok := read(kind, n, device.Report(bad))
		if !ok {
			continue
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
				Device: kind.Name, Kind: uint8(k),
			})
		}
	}
}
