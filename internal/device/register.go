package device

// The register reader's building blocks: a node's devices of a Kind, as the family's GetNodeDevices and
// CheckHealth read them (pkg/device/<vendor>/device.go).

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// RegisterReader reads a node's devices of the Kind. ok is false when the node registers none of the type,
// or its registration is refused or unreadable (reported on bad, naming the field). field names where the
// devices were read, for the engine's later problems (a device registered twice).
type RegisterReader func(k *Kind, n *corev1.Node, bad Report) (devs []codec.DeviceInfo, field string, ok bool)

// RegisterList is HAMi's device list in the Kind's Register annotation (codec.ParseDeviceRegister), the
// default of a Kind without ReadRegister.
func RegisterList(k *Kind, n *corev1.Node, bad Report) ([]codec.DeviceInfo, string, bool) {
	return readAnnotation(k, n, bad, codec.ParseDeviceRegister)
}

// RegisterParsed reads the Register annotation with the family's own parser, when its plugin writes its own
// layout rather than HAMi's device list (MetaX sGPU). Errors name key.
func RegisterParsed(parse func(key, value string) ([]codec.DeviceInfo, error)) RegisterReader {
	return func(k *Kind, n *corev1.Node, bad Report) ([]codec.DeviceInfo, string, bool) {
		return readAnnotation(k, n, bad, parse)
	}
}

func readAnnotation(k *Kind, n *corev1.Node, bad Report, parse func(key, value string) ([]codec.DeviceInfo, error)) ([]codec.DeviceInfo, string, bool) {
	reg, ok := n.Annotations[k.Register]
	if !ok {
		return nil, "", false
	}
	field := "metadata.annotations[" + k.Register + "]"
	devs, err := parse(k.Register, reg)
	if err != nil {
		bad(field, "%v; its %ss are not counted", err, k.Word)
		return nil, field, false
	}
	return devs, field, true
}

// FromNode derives the devices from the Node object (its capacity, its labels) for a family whose plugin
// registers no annotation (Cambricon, MetaX GPU, Mthreads ...); no device is no registration.
func FromNode(devices func(n *corev1.Node) []codec.DeviceInfo) RegisterReader {
	return func(k *Kind, n *corev1.Node, _ Report) ([]codec.DeviceInfo, string, bool) {
		devs := devices(n)
		return devs, "status.capacity[" + k.Cores + "]", len(devs) > 0
	}
}

// WhileServing reads the Register annotation with read only while the family's health check of its device
// plugin passes (AMD's CheckHealth): when serving returns a problem for a node carrying the annotation, HAMi
// does not register the node's devices of the type, and the problem (on field) is reported.
func WhileServing(serving func(n *corev1.Node) (field, problem string), read RegisterReader) RegisterReader {
	return func(k *Kind, n *corev1.Node, bad Report) ([]codec.DeviceInfo, string, bool) {
		if _, ok := n.Annotations[k.Register]; !ok {
			return nil, "", false
		}
		if f, problem := serving(n); problem != "" {
			bad(f, "%s", problem)
			return nil, "", false
		}
		return read(k, n, bad)
	}
}

// Readers returns the Kind's readers, the defaults for those it leaves nil: ShareRequest, NamesCount,
// AdmitCount, RegisterList, ReadDeviceList.
func (k *Kind) Readers() (RequestReader, Asker, Admitter, RegisterReader, AllocationReader) {
	req, asks, admit, reg, alloc := k.ReadRequest, k.Asks, k.Admit, k.ReadRegister, k.ReadAllocation
	if req == nil {
		req = ShareRequest
	}
	if asks == nil {
		asks = NamesCount
	}
	if admit == nil {
		admit = AdmitCount
	}
	if reg == nil {
		reg = RegisterList
	}
	if alloc == nil {
		alloc = ReadDeviceList
	}
	return req, asks, admit, reg, alloc
}
