package device

// The register reader's building blocks: a node's devices of a Kind, as the family's GetNodeDevices and
// CheckHealth read them (pkg/device/<vendor>/device.go).

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// Registration is a node's devices of a Kind as its RegisterReader read them.
type Registration struct {
	Devices []codec.DeviceInfo
	// Field names where the devices were read, for the engine's later problems (a device registered twice).
	Field string
	// Format is the layout of a register annotation that HAMi's releases read differently
	// (codec.RegisterFormat: NVIDIA's JSON and text forms), which the engine checks against --hami-version;
	// "" when the family has one layout.
	Format string
	// Unregistered says why a node without the type's devices is not registered, for a type whose absence
	// makes the node unregistered in HAMi's words (NVIDIA's: "no hami.io/node-nvidia-register annotation ...",
	// or the annotation's parse error); "" for the others. The first in Config.Kinds order is the node's
	// RegisterError while no type registers.
	Unregistered string
}

// RegisterReader reads a node's devices of the Kind. ok is false when the node registers none of the type,
// or its registration is refused or unreadable (reported on bad, naming the field).
type RegisterReader func(k *Kind, n *corev1.Node, bad Report) (reg Registration, ok bool)

// RegisterList is HAMi's device list in the Kind's Register annotation (codec.ParseDeviceRegister), the
// default of a Kind without ReadRegister. A device's mode and MIG profiles are NVIDIA's and not kept: every
// other family's Fit treats its devices as shared (hami-core).
func RegisterList(k *Kind, n *corev1.Node, bad Report) (Registration, bool) {
	return readAnnotation(k, n, bad, codec.ParseDeviceRegister)
}

// RegisterParsed reads the Register annotation with the family's own parser, when its plugin writes its own
// layout rather than HAMi's device list (MetaX sGPU). Errors name key.
func RegisterParsed(parse func(key, value string) ([]codec.DeviceInfo, error)) RegisterReader {
	return func(k *Kind, n *corev1.Node, bad Report) (Registration, bool) {
		return readAnnotation(k, n, bad, parse)
	}
}

func readAnnotation(k *Kind, n *corev1.Node, bad Report, parse func(key, value string) ([]codec.DeviceInfo, error)) (Registration, bool) {
	reg, ok := n.Annotations[k.Register]
	if !ok {
		return Registration{}, false
	}
	field := "metadata.annotations[" + k.Register + "]"
	devs, err := parse(k.Register, reg)
	if err != nil {
		bad.Report(field, "%v; its %ss are not counted", err, k.Word)
		return Registration{Field: field}, false
	}
	for i := range devs {
		devs[i].Mode, devs[i].MigProfiles = "", nil
	}
	return Registration{Devices: devs, Field: field}, true
}

// FromNode derives the devices from the Node object (its capacity, its labels) for a family whose plugin
// registers no annotation (Cambricon, MetaX GPU, Mthreads ...); no device is no registration.
func FromNode(devices func(n *corev1.Node) []codec.DeviceInfo) RegisterReader {
	return func(k *Kind, n *corev1.Node, _ Report) (Registration, bool) {
		devs := devices(n)
		return Registration{Devices: devs, Field: "status.capacity[" + k.Cores + "]"}, len(devs) > 0
	}
}

// WhileServing reads the Register annotation with read only while the family's health check of its device
// plugin passes (AMD's CheckHealth): when serving returns a problem for a node carrying the annotation, HAMi
// does not register the node's devices of the type, and the problem (on field) is reported.
func WhileServing(serving func(n *corev1.Node) (field, problem string), read RegisterReader) RegisterReader {
	return func(k *Kind, n *corev1.Node, bad Report) (Registration, bool) {
		if _, ok := n.Annotations[k.Register]; !ok {
			return Registration{}, false
		}
		if f, problem := serving(n); problem != "" {
			bad.Report(f, "%s", problem)
			return Registration{}, false
		}
		return read(k, n, bad)
	}
}

// Writer is the Kind's device-list writer, ListByName when it leaves WriteList nil.
func (k *Kind) Writer() ListWriter {
	if k.WriteList != nil {
		return k.WriteList
	}
	return ListByName
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
