package device

import "testing"

func TestLastIndices(t *testing.T) {
	for _, tc := range []struct {
		name       string
		containers [][]Placed
		want       string
	}{
		{"no containers", nil, ""},
		{"no devices", [][]Placed{{}, {}}, ""},
		{"one container, in placement order", [][]Placed{{{Index: 3}, {Index: 1}}}, "3,1"},
		{"the last container with devices", [][]Placed{{{Index: 0}}, {{Index: 2}, {Index: 5}}, {}}, "2,5"},
	} {
		if got := LastIndices(tc.containers); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
