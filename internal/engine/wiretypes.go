package engine

import "reflect"

// WireTypes maps each type of the engine that writes itself as JSON (MarshalJSON) to the struct it writes, so
// that the output schema's documentation (cli's schema test) lists the fields as written, not as kept.
func WireTypes() map[reflect.Type]reflect.Type {
	return map[reflect.Type]reflect.Type{
		reflect.TypeOf(Verdict{}):       reflect.TypeOf(verdictWire{}),
		reflect.TypeOf(PodAllocation{}): reflect.TypeOf(podAllocationWire{}),
	}
}
