package kunlun

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// FitVXPU: a used XPU is cut in equal slices and takes only a request of the slice's size.
func TestEqualShareRow(t *testing.T) {
	k := &device.Kind{Word: "XPU"}
	for _, tc := range []struct {
		name          string
		slots         int32
		usedMem, need int64
		have          int64
		fail          bool
	}{
		{name: "unused", slots: 0, usedMem: 0, need: 24576},
		{name: "the slice size", slots: 2, usedMem: 49152, need: 24576, have: 24576},
		{name: "another size", slots: 1, usedMem: 49152, need: 24576, have: 49152, fail: true},
	} {
		o := EqualShareRow.Check(&device.Dev{Kind: k, UsedSlots: tc.slots, UsedMem: tc.usedMem, MemNeed: tc.need})
		if o.Fail != tc.fail || o.Have != tc.have || o.Need != tc.need || o.Unit != "MiB" {
			t.Errorf("%s: %+v", tc.name, o)
		}
	}
}
