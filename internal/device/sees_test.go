package device

import (
	"strings"
	"testing"
)

// TypeContains is HAMi's strings.Contains(strings.ToLower(device type), strings.ToLower(request type))
// (getNodeResources, pkg/scheduler/score.go:43-52 at v2.10.0), whatever path it takes.
func TestTypeContains(t *testing.T) {
	for _, tc := range []struct {
		name, deviceType string
		want             bool
	}{
		{"Ascend910B4", "Ascend910B4-1", true},
		{"Ascend910B4", "ascend910b4", true},
		{"Ascend910B4-1", "Ascend910B4", false},
		{"Ascend910B", "Ascend910B3", true},
		{"Ascend910B", "Ascend910C", false},
		{"NVIDIA", "NVIDIA-A100", true},
		{"AMD", "MI300X", false},
		{"XPU", "P800 xpu", true},
		{"Ascend910B4", "Aßcend910B4", false},
		{"Ascend910B4", "Ä-ascend910B4", true},
		{"", "anything", true},
		{"Ascend910B4", "", false},
	} {
		want := strings.Contains(strings.ToLower(tc.deviceType), strings.ToLower(tc.name))
		if want != tc.want {
			t.Fatalf("table row %q in %q: HAMi says %v", tc.name, tc.deviceType, want)
		}
		if got := TypeContains(tc.name)(tc.deviceType); got != want {
			t.Errorf("TypeContains(%q)(%q) = %v, want %v", tc.name, tc.deviceType, got, want)
		}
	}
}
