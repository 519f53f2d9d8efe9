package engine

// The register reader's loop: each device type's devices on a node read by its family's reader
// (device.Kind.ReadRegister: a register annotation, the Node-derived devices, the family's own parser and
// health check), in Config.Kinds order.

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// addDevices reads every device type's devices on the node and appends them to it. A node that registers
// any type is registered (a DCU-only node is not "unregistered" because it has no NVIDIA annotation); while
// none does, its RegisterError is the first type's reason that gives one (NVIDIA's: its annotation missing
// or unreadable). A register annotation in a layout the configured HAMi version cannot read is reported: its
// type does not register the node, and its devices stay listed only while no other type registers it.
func (c *Cluster) addDevices(n *corev1.Node, node *Node, bad reportFunc) {
	var unreadable []uint8 // the types whose annotation the configured HAMi version cannot read
	for k := range c.kinds {
		kind := &c.kinds[k]
		_, _, _, read, _ := kind.Readers()
		reg, ok := read(kind, n, device.ReportFunc(bad))
		if !ok {
			if !node.Registered && node.RegisterError == "" {
				node.RegisterError = reg.Unregistered
			}
			continue
		}
		if msg := c.versionProblem(reg.Format); msg != "" {
			// One model of the node for every surface: what HAMi's version cannot read is not registered. The
			// devices stay listed (their pods still hold them); no gate lets a pod reach them.
			bad(reg.Field, "%s", msg)
			unreadable = append(unreadable, uint8(k))
			if !node.Registered {
				node.RegisterError = msg
			}
			node.UnreadableBy = c.cfg.hamiVersion().String()
		} else if !node.Registered {
			node.Registered, node.RegisterError = true, ""
		}
		node.GPUs = slices.Grow(node.GPUs, len(reg.Devices))
		for _, d := range reg.Devices {
			if registered(node.GPUs, d.ID) {
				bad(reg.Field, "%s %s is registered twice; the second entry is ignored", kind.Word, d.ID)
				continue
			}
			mode := d.Mode
			if mode == "" {
				mode = ModeHamiCore
			}
			node.GPUs = append(node.GPUs, GPU{
				UUID: d.ID, Index: d.Index, Type: d.Type, Numa: d.Numa, Mode: mode, Healthy: d.Health,
				Slots: d.Count, TotalMem: d.Devmem, TotalCores: d.Devcore, MigProfiles: d.MigProfiles, reg: len(node.GPUs),
				Device: deviceName(kind), Kind: uint8(k), registered: newRegisteredExtra(d.QosPolicy, d.NetworkID),
			})
		}
	}
	if len(unreadable) > 0 && node.Registered {
		// Another type registered here: its devices stay usable, those HAMi's version cannot read do not.
		kept := node.GPUs[:0]
		for _, g := range node.GPUs {
			if !slicesContains(unreadable, g.Kind) {
				kept = append(kept, g)
			}
		}
		node.GPUs = kept
	}
}

// versionProblem is registerVersionProblem for a register annotation's format; "" for a family with one
// layout.
func (c *Cluster) versionProblem(format string) string {
	if format == "" {
		return ""
	}
	return registerVersionProblem(format, c.cfg.hamiVersion())
}

// deviceName is GPU.Device: the type's name, empty for the main type's (NVIDIA's) GPUs.
func deviceName(k *device.Kind) string {
	if mainKind(k) {
		return ""
	}
	return k.Name
}

// registered reports whether a device of that UUID is among those read so far (a node's few devices are
// scanned: no map is made per node).
func registered(gpus []GPU, uuid string) bool {
	for i := range gpus {
		if gpus[i].UUID == uuid {
			return true
		}
	}
	return false
}

func slicesContains(s []uint8, v uint8) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
