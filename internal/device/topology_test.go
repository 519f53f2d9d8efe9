package device

import (
	"slices"
	"testing"
)

// HAMi's computeBestCombination (pkg/device/ascend/device.go:631-676 at v2.10.0): groups the largest first, each
// group in the order its candidates were found, until count; groups of one size in the order found here.
func TestGroupsLargestFirst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		keys  []int
		count int
		want  []int
	}{
		{"the larger group first (seed 63's second container)", []int{1, 0, 0}, 2, []int{1, 2}},
		{"spills into the next group", []int{1, 0, 0}, 3, []int{1, 2, 0}},
		{"groups of one size: the one found first", []int{5, 7, 7, 5}, 2, []int{0, 3}},
		{"a group's candidates in the order found", []int{2, 3, 2, 3, 2}, 3, []int{0, 2, 4}},
		{"fewer candidates than asked", []int{4, 4}, 3, []int{0, 1}},
		{"nothing asked", []int{1}, 0, []int{}},
	} {
		if got := GroupsLargestFirst(tc.keys, tc.count); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
