package metaxsgpu

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// checkDeviceQos (pkg/device/metax/sdevice.go): a used sGPU takes a request below 100 % cores only when no
// counted pod of another policy shares it.
func TestQosRow(t *testing.T) {
	ks, err := Family{}.Kinds(nil)
	if err != nil {
		t.Fatal(err)
	}
	k := &ks[0]
	for _, tc := range []struct {
		name    string
		pod     int
		used    int32
		cores   int64
		sharers [device.MaxQosPolicies]int32
		skip    bool
		fail    string
	}{
		{name: "a refused policy: the row is skipped", pod: -1, used: 1, cores: 30, sharers: [3]int32{0, 1, 0}, skip: true},
		{name: "unused sGPU", pod: 0, used: 0, cores: 30, sharers: [3]int32{0, 1, 0}},
		{name: "whole-GPU request", pod: 0, used: 1, cores: 100, sharers: [3]int32{0, 1, 0}},
		{name: "same policy", pod: 1, used: 2, cores: 30, sharers: [3]int32{0, 2, 0}},
		{name: "another policy shares it", pod: 0, used: 1, cores: 30, sharers: [3]int32{0, 0, 1}, fail: "shared by burst-share pods; the pod is best-effort"},
	} {
		o := QosRow.Check(&device.Dev{Kind: k, PodQos: tc.pod, UsedSlots: tc.used, AskedCores: tc.cores, Sharers: tc.sharers})
		if o.Skip != tc.skip || o.Fail != (tc.fail != "") || o.Detail != tc.fail {
			t.Errorf("%s: %+v, want skip %v fail %q", tc.name, o, tc.skip, tc.fail)
		}
	}
	if !k.Has(QosRow.Name) {
		t.Error("the sGPU Kind lacks its qos row")
	}
}
