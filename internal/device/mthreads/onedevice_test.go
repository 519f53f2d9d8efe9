package mthreads

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// customFilterRule: a pod's containers share one GPU.
func TestOneDeviceRow(t *testing.T) {
	k := &device.Kind{Name: "Mthreads"}
	for _, tc := range []struct {
		taken, fail string
	}{
		{"", ""},
		{"n1-mthreads-0", "an earlier container of the pod took n1-mthreads-0; HAMi gives a pod's Mthreads containers one device"},
	} {
		taken := tc.taken
		o := OneDeviceRow.Check(&device.Dev{Kind: k, UUID: "n1-mthreads-1", OtherTakenF: func() string { return taken }})
		if o.Fail != (tc.fail != "") || o.Detail != tc.fail || o.Skip {
			t.Errorf("taken %q: %+v, want fail %q", tc.taken, o, tc.fail)
		}
	}
	if o := OneDeviceRow.Check(&device.Dev{Kind: k}); o.Fail {
		t.Error("a Dev without the walk's hook has nothing taken")
	}
}
