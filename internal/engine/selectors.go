package engine

// A pod's selectors of one device type: HAMi's CheckType and CheckUUID, vgpu-mode, and the QoS policy a
// family row reads.

import (
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// selectors are a pod's type, mode and UUID selector annotations for one device type, and its QoS policy.
type selectors struct {
	kind                       *device.Kind
	useTypes, noUseTypes       []string // lower case
	rawUseTypes, rawNoUseTypes []string
	useUUIDs, noUseUUIDs       []string
	// mode is the pod's nvidia.com/vgpu-mode for a type with modes (the MIG row: NVIDIA); "" matches any.
	mode string
	qos  int32 // the pod's QoS policy index; -1: the Kind has none
	// typed is set when the pod names a mode or a type list: typeMatches then reads them (beside qos, in its
	// padding: the fitter keeps a few selectors and stays in its size class).
	typed bool
}

// newSelectors fills s with the pod's selectors of type k.
func newSelectors(s *selectors, k *device.Kind, annos map[string]string, mode string) *selectors {
	*s = selectors{kind: k, qos: int32(k.QosIndex(annos)), mode: mode}
	if k.UseType != "" {
		s.rawUseTypes = splitList(annos[k.UseType])
		s.rawNoUseTypes = splitList(annos[k.NoUseType])
	}
	for _, t := range s.rawUseTypes {
		s.useTypes = append(s.useTypes, strings.ToLower(t))
	}
	for _, t := range s.rawNoUseTypes {
		s.noUseTypes = append(s.noUseTypes, strings.ToLower(t))
	}
	if k.UseUUID != "" {
		s.useUUIDs = splitList(annos[k.UseUUID])
		s.noUseUUIDs = splitList(annos[k.NoUseUUID])
	}
	s.typed = s.mode != "" || len(s.useTypes) > 0 || len(s.noUseTypes) > 0
	return s
}

// typeMatches is HAMi's CheckType (pkg/device/devices.go:719-737; AMD's checkAMDType is the same): the
// device's mode is the pod's vgpu-mode when it names one, a use list, when given, must have an item the type
// contains, and a no-use list, when given, must have none; all apply together; case-insensitive. A type
// without selectors (Ascend, Cambricon) always matches.
func (s *selectors) typeMatches(t, mode string) bool {
	// Small enough to inline: most pods name no mode and no type, and this runs for every device looked at.
	return s == nil || !s.typed || s.typeListed(t, mode)
}

// typeListed is typeMatches of a pod that names a mode or a type.
func (s *selectors) typeListed(t, mode string) bool {
	if s.mode != "" && s.mode != mode {
		return false
	}
	if len(s.useTypes) == 0 && len(s.noUseTypes) == 0 {
		return true
	}
	t = strings.ToLower(t)
	return (len(s.useTypes) == 0 || s.typeIn(t, s.useTypes)) && !s.typeIn(t, s.noUseTypes)
}

func (s *selectors) typeIn(t string, list []string) bool {
	for _, u := range list {
		if strings.Contains(t, u) {
			return true
		}
	}
	return false
}

// typeDetail names the mode or the lists a refused type was held against.
func (s *selectors) typeDetail(mode string) string {
	if s.mode != "" && s.mode != mode {
		return "mode " + mode + " is not the vgpu-mode " + s.mode
	}
	use := "type not in " + s.kind.UseType + "=" + strings.Join(s.rawUseTypes, ",")
	noUse := "type in " + s.kind.NoUseType + "=" + strings.Join(s.rawNoUseTypes, ",")
	switch {
	case len(s.useTypes) == 0:
		return noUse
	case len(s.noUseTypes) == 0:
		return use
	}
	return use + ", or " + noUse
}

// uuidMatches is HAMi's CheckUUID (pkg/device/devices.go:693-713): a use list, when given, must name the
// device, and a no-use list, when given, must not; both apply together.
func (s *selectors) uuidMatches(id string) bool {
	return s == nil || len(s.useUUIDs) == 0 && len(s.noUseUUIDs) == 0 || s.uuidListed(id) // inlined, as typeMatches
}

// uuidListed is uuidMatches of a pod that names a UUID.
func (s *selectors) uuidListed(id string) bool {
	return (len(s.useUUIDs) == 0 || contains(s.useUUIDs, id)) && !contains(s.noUseUUIDs, id)
}

// uuidFilterName names the list that refused a device: the use list when the device is not in it, else the
// no-use list.
func (s *selectors) uuidFilterName(id string) string {
	if len(s.useUUIDs) > 0 && !contains(s.useUUIDs, id) {
		return s.kind.UseUUID
	}
	return s.kind.NoUseUUID
}
