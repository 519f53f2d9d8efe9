package codec

import (
	"fmt"
	"strconv"
)

// ParseMigAllocations reads hami.io/vgpu-mig-allocations (HAMi v2.10), a JSON array with one object per MIG device
// reservation. Elements with an empty gpuUUID, a negative container or device index, a negative placement start
// or a placement size below 1 are errors naming the element. A blank value is an error; "[]" gives nil.
func ParseMigAllocations(value string) ([]MigAllocation, error) {
	var as []MigAllocation
	if err := decodeJSONArray(PodMigAllocationsAnnotation, value, &as); err != nil {
		return nil, err
	}
	if len(as) == 0 {
		return nil, nil
	}
	for i, a := range as {
		bad := func(field string, v string, msg string) error {
			return &Error{Key: PodMigAllocationsAnnotation, Pos: fmt.Sprintf("element %d, field %s", i, field), Value: v, Msg: msg}
		}
		itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
		switch {
		case a.GPUUUID == "":
			return nil, bad("gpuUUID", "", "is empty")
		case a.ContainerIndex < 0:
			return nil, bad("containerIndex", itoa(int64(a.ContainerIndex)), "is negative")
		case a.DeviceIndex < 0:
			return nil, bad("deviceIndex", itoa(int64(a.DeviceIndex)), "is negative")
		case a.Placement.Start < 0:
			return nil, bad("placement.start", itoa(int64(a.Placement.Start)), "is negative")
		case a.Placement.Size <= 0:
			return nil, bad("placement.size", itoa(int64(a.Placement.Size)), "is not positive")
		}
	}
	return as, nil
}

// FormatMigAllocations writes the JSON array; no allocations give "[]".
func FormatMigAllocations(as []MigAllocation) string {
	if as == nil {
		as = []MigAllocation{}
	}
	return mustJSON(as)
}
