package device

import "encoding/json"

// Family is one device family (HAMi's pkg/device/<vendor>): a package under internal/device/<name>,
// registered by one line in internal/device/all. Kinds reads the family's section of HAMi's device ConfigMap
// (device-config.yaml, as JSON; nil for the chart defaults) and returns its device types, each with its
// behaviour.
type Family interface {
	// Name is the family's registry name, which --device selects by: "nvidia", "hygon", "ascend", ...
	Name() string
	// Section is the key of the family's section in device-config.yaml ("hygon", "vnpus", ...).
	Section() string
	Kinds(section json.RawMessage) ([]Kind, error)
}
