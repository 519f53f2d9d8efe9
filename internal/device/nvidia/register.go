package nvidia

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Unregistered is why a node without NVIDIA's register annotation is not registered.
const Unregistered = "no " + codec.NodeRegisterAnnotation + " annotation: the node component has not registered GPUs"

// readRegister is NVIDIA's register reader: hami.io/node-nvidia-register in any of the layouts HAMi's
// releases wrote (the JSON list, the text forms; its Format is checked against --hami-version by the
// engine), each GPU with its mode and MIG profiles. A node without it, or with one that does not parse, is
// unregistered in these words unless another family registers it.
func readRegister(k *device.Kind, n *corev1.Node, bad device.Report) (device.Registration, bool) {
	reg, ok := n.Annotations[k.Register]
	if !ok {
		return device.Registration{Unregistered: Unregistered}, false
	}
	field := "metadata.annotations[" + k.Register + "]"
	devs, err := codec.ParseDeviceRegister(k.Register, reg)
	if err != nil {
		bad.Report(field, "%v", err)
		return device.Registration{Field: field, Unregistered: err.Error()}, false
	}
	return device.Registration{Devices: devs, Field: field, Format: codec.RegisterFormat(reg)}, true
}
