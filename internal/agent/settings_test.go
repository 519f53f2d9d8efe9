package agent

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

func TestTypeName(t *testing.T) {
	for _, c := range []struct {
		name   string
		legacy bool
		want   string
	}{
		{"NVIDIA A100-SXM4-80GB", false, "NVIDIA A100-SXM4-80GB"},
		{"NVIDIA A100-SXM4-80GB", true, "NVIDIA-NVIDIA A100-SXM4-80GB"},
		{"Tesla T4", false, "NVIDIA-Tesla T4"},
		{"Tesla T4", true, "NVIDIA-Tesla T4"},
		{"Mock NVIDIA A100-SXM4-40GB", false, "NVIDIA-Mock NVIDIA A100-SXM4-40GB"},
	} {
		if got := TypeName(c.name, c.legacy); got != c.want {
			t.Errorf("TypeName(%q, legacy=%v) = %q, want %q", c.name, c.legacy, got, c.want)
		}
	}
}

func TestDeviceInfos(t *testing.T) {
	gpus := []GPU{
		{Index: 0, UUID: "GPU-a", Name: "Tesla T4", MemoryMiB: 15360, NUMA: 1},
		{Index: 1, UUID: "GPU-b", Name: "Tesla T4", MemoryMiB: 15360},
		{Index: 2, UUID: "GPU-c", Name: "Tesla T4", MemoryMiB: 15360},
		{Index: 3, UUID: "GPU-d", Name: "Tesla T4", MemoryMiB: 15360},
	}
	s := DefaultSettings()
	s.SplitCount, s.MemoryScaling, s.CoreScaling, s.OperatingMode = 4, 2, 1.5, ModeMPS
	s.Exclude = []string{"1", "gpu-c"} // by index, and by UUID in any case
	got := DeviceInfos(gpus, s, false, func(uuid string) bool { return uuid != "GPU-d" })
	want := []codec.DeviceInfo{
		{ID: "GPU-a", Index: 0, Count: 4, Devmem: 30720, Devcore: 150, Type: "NVIDIA-Tesla T4", Numa: 1, Mode: "mps", Health: true},
		{ID: "GPU-d", Index: 3, Count: 4, Devmem: 30720, Devcore: 150, Type: "NVIDIA-Tesla T4", Mode: "mps", Health: false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DeviceInfos =\n%+v\nwant\n%+v", got, want)
	}
}

func TestApplyConfigMap(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "hami-device-plugin"}, Data: map[string]string{
		NodeConfigKey: `{"nodeconfig":[
			{"name":"other","devicesplitcount":99},
			{"name":"gpu-1","operatingmode":"mps","devicememoryscaling":1.8,"devicesplitcount":5,
			 "filterdevices":{"uuid":["GPU-x"],"index":[3]}}]}`,
	}}
	base := DefaultSettings()
	base.CoreScaling = 2 // from a flag: the entry does not name it, so it stays
	base.Exclude = []string{"0"}
	got, found, err := ApplyConfigMap(base, cm, "gpu-1")
	if err != nil || !found {
		t.Fatalf("ApplyConfigMap = %v, %v", found, err)
	}
	want := base
	want.OperatingMode, want.MemoryScaling, want.SplitCount = "mps", 1.8, 5
	want.Exclude = []string{"0", "GPU-x", "3"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings %+v, want %+v", got, want)
	}
	if !reflect.DeepEqual(base.Exclude, []string{"0"}) {
		t.Errorf("the base settings were changed: %v", base.Exclude)
	}
	if got, found, err := ApplyConfigMap(base, cm, "gpu-2"); found || err != nil || !reflect.DeepEqual(got, base) {
		t.Errorf("a node without an entry: %+v, %v, %v", got, found, err)
	}
	bad := cm.DeepCopy()
	bad.Data[NodeConfigKey] = `{"nodeconfig":[{"name":"gpu-1","devicesplitcount":0}]}`
	if _, _, err := ApplyConfigMap(base, bad, "gpu-1"); err == nil {
		t.Errorf("a split count of 0 was accepted")
	}
}

func TestXIDSettings(t *testing.T) {
	s := DefaultSettings()
	if !s.ignoresXID(13) || !s.ignoresXID(109) || s.ignoresXID(79) || s.ignoresXID(48) {
		t.Errorf("default ignored XIDs %v", s.IgnoredXIDs)
	}
	if err := s.ApplyDisableHealthChecks("48, 79"); err != nil || !s.ignoresXID(48) || !s.ignoresXID(79) || s.DisableHealthChecks {
		t.Errorf("DP_DISABLE_HEALTHCHECKS=48,79: %v %+v", err, s)
	}
	if err := s.ApplyDisableHealthChecks("all"); err != nil || !s.DisableHealthChecks {
		t.Errorf("DP_DISABLE_HEALTHCHECKS=all: %v %+v", err, s)
	}
	if err := s.ApplyDisableHealthChecks("often"); err == nil {
		t.Errorf("DP_DISABLE_HEALTHCHECKS=often accepted")
	}
	if l, err := ParseXIDList(" 13, 31 ,,"); err != nil || !reflect.DeepEqual(l, []uint64{13, 31}) {
		t.Errorf("ParseXIDList = %v, %v", l, err)
	}
	if _, err := ParseXIDList("13,x"); err == nil {
		t.Errorf("ParseXIDList accepted x")
	}
}
