package metaxsgpu

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// checkDeviceQos (pkg/device/metax/sdevice.go:528-556 at v2.10.0): a used sGPU takes a request below 100 %
// cores only when its registered policy is unset or the pod's; the sharers' policies do not count, and a
// device an earlier container of the pod took is the pod's (AddResourceUsage, 310-330).
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
		reg     string
		taken   bool
		sharers [device.MaxQosPolicies]int32
		skip    bool
		fail    string
	}{
		{name: "a refused policy: the row is skipped", pod: -1, used: 1, cores: 30, reg: "fixed-share", skip: true},
		{name: "unused sGPU", pod: 0, used: 0, cores: 30, reg: "fixed-share"},
		{name: "whole-GPU request", pod: 0, used: 1, cores: 100, reg: "fixed-share"},
		{name: "registered with the pod's policy", pod: 1, used: 2, cores: 30, reg: "fixed-share"},
		{name: "registered with none", pod: 2, used: 2, cores: 30, reg: ""},
		{name: "registered with another", pod: 0, used: 1, cores: 30, reg: "burst-share", fail: "registered with QoS policy burst-share; the pod is best-effort"},
		{name: "sharers of the pod's policy do not help", pod: 0, used: 1, cores: 30, reg: "burst-share", sharers: [3]int32{1, 0, 0},
			fail: "registered with QoS policy burst-share; the pod is best-effort"},
		{name: "sharers of another policy do not hurt", pod: 0, used: 1, cores: 30, reg: "best-effort", sharers: [3]int32{0, 0, 1}},
		{name: "taken by an earlier container of the pod", pod: 0, used: 1, cores: 30, reg: "burst-share", taken: true},
	} {
		o := QosRow.Check(&device.Dev{Kind: k, PodQos: tc.pod, UsedSlots: tc.used, AskedCores: tc.cores, RegQos: tc.reg, TakenByPod: tc.taken, Sharers: tc.sharers})
		if o.Skip != tc.skip || o.Fail != (tc.fail != "") || o.Detail != tc.fail {
			t.Errorf("%s: %+v, want skip %v fail %q", tc.name, o, tc.skip, tc.fail)
		}
	}
	if !k.Has(QosRow.Name) {
		t.Error("the sGPU Kind lacks its qos row")
	}
}
