package device_test

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/device/all"
	"github.com/kubectl-hami/kubectl-hami/internal/device/ascend"
)

// TestTrim is HAMi's trimMemory (pkg/device/ascend/device.go) on the 910B3 and 310P chart templates.
func TestTrim(t *testing.T) {
	b3 := ascend.KindOf(ascend.Defaults[3])
	p := ascend.KindOf(ascend.Defaults[6])
	tests := []struct {
		k       device.Kind
		in, mem int64
		tpl     string
		ok      bool
	}{
		{b3, 1, 16384, "vir05_1c_16g", true},
		{b3, 16384, 16384, "vir05_1c_16g", true},
		{b3, 16385, 32768, "vir10_3c_32g", true},
		{b3, 32769, 65536, "", true},
		{b3, 65536, 65536, "", true},
		{b3, 65537, 0, "", false},
		{p, 3000, 3072, "vir01", true},
		{p, 12289, 21527, "", true}, // above every template: the allocatable memory, not the capacity
		{p, 24577, 0, "", false},
		{device.Kind{}, 1234, 1234, "", true},
	}
	for _, tc := range tests {
		mem, tpl, ok := tc.k.Trim(tc.in)
		if mem != tc.mem || tpl != tc.tpl || ok != tc.ok {
			t.Errorf("%s Trim(%d) = %d %q %v, want %d %q %v", tc.k.Name, tc.in, mem, tpl, ok, tc.mem, tc.tpl, tc.ok)
		}
	}
}

func TestDefaultsAreValid(t *testing.T) {
	ks := all.Defaults()
	if len(ks) < 2 {
		t.Fatalf("only %d kinds", len(ks))
	}
	seen := map[string]bool{}
	for i := range ks {
		if err := ks[i].Validate(); err != nil {
			t.Error(err)
		}
		for _, key := range []string{ks[i].Register, ks[i].Allocated, ks[i].Count} {
			if key == "" {
				continue // a family that derives devices from the Node registers none
			}
			if seen[key] {
				t.Errorf("%s: %s is used by two kinds", ks[i].Name, key)
			}
			seen[key] = true
		}
	}
}

// TestSections: a section renames resources, a configs list replaces the chips, bad JSON names the section.
func TestSections(t *testing.T) {
	ks, err := all.Kinds(map[string]json.RawMessage{
		"hygon": json.RawMessage(`{"resourceCountName":"example.com/dcu","memoryFactor":2}`),
		"vnpus": json.RawMessage(`{"configs":[{"commonWord":"Ascend910C","chipName":"x","memoryAllocatable":100,"memoryCapacity":100,"superPod":true}]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	var dcu, c *device.Kind
	for i := range ks {
		switch ks[i].Name {
		case "DCU":
			dcu = &ks[i]
		case "Ascend910C":
			c = &ks[i]
		case "Ascend910B3":
			t.Error("a configs list replaces the default chips")
		}
	}
	if dcu == nil || dcu.Count != "example.com/dcu" || dcu.Memory != "hygon.com/dcumem" || dcu.MemoryFactor != 2 {
		t.Fatalf("dcu %+v", dcu)
	}
	if c == nil || c.Pair != 2 || c.Count != "huawei.com/Ascend910C" || c.Register != "hami.io/node-register-Ascend910C" {
		t.Fatalf("910C %+v", c)
	}
	if _, err := all.Kinds(map[string]json.RawMessage{"hygon": json.RawMessage(`{"memoryFactor":"x"}`)}); err == nil {
		t.Fatal("bad section accepted")
	}
}

// TestNewFamilySections: each family added with the seam reads its section of HAMi's device-config.yaml
// (the chart's keys: charts/hami/templates/scheduler/device-configmap.yaml) and keeps its defaults otherwise.
func TestNewFamilySections(t *testing.T) {
	ks, err := all.Kinds(map[string]json.RawMessage{
		"mthreads": json.RawMessage(`{"resourceCountName":"x/vgpu","resourceMemoryName":"x/mem","resourceCoreName":"x/core"}`),
		"kunlun":   json.RawMessage(`{"resourceCountName":"x/xpu","resourceVCountName":"x/vxpu","resourceVMemoryName":"x/vxpu-mem"}`),
		"enflame":  json.RawMessage(`{"resourceNameGCU":"x/gcu","resourceNameDRSGCU":"enflame.com/drs-gcu"}`),
		"amd":      json.RawMessage(`{"resourceCountName":"x/amd"}`),
		"biren":    json.RawMessage(`{"resourceCountName":"x/br"}`),
		"vastai":   json.RawMessage(`{"resourceCountName":"x/va"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Mthreads": "x/vgpu x/mem x/core", "kunlun": "x/xpu", "XPU": "x/vxpu x/vxpu-mem", "GCU": "x/gcu",
		"AMD": "x/amd amd.com/gpumem amd.com/gpucores", "Biren": "x/br", "Vastai": "x/va",
	}
	for i := range ks {
		if w, ok := want[ks[i].Name]; ok {
			if got := strings.Join(ks[i].Resources(), " "); got != w {
				t.Errorf("%s resources %q, want %q", ks[i].Name, got, w)
			}
			delete(want, ks[i].Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("kinds missing: %v", want)
	}
	for _, sec := range []string{"mthreads", "kunlun", "enflame", "amd", "biren", "vastai"} {
		if _, err := all.Kinds(map[string]json.RawMessage{sec: json.RawMessage(`[`)}); err == nil || !strings.Contains(err.Error(), sec) {
			t.Errorf("bad %s section: %v", sec, err)
		}
	}
}

func TestCapacityDevices(t *testing.T) {
	node := func(v string) *corev1.Node {
		n := &corev1.Node{}
		n.Name = "n1"
		if v != "" {
			n.Status.Capacity = corev1.ResourceList{"x.com/gpu": resource.MustParse(v)}
		}
		return n
	}
	tmpl := codec.DeviceInfo{Count: 1, Devmem: 100, Devcore: 100, Type: "X", Health: true}
	for v, want := range map[string]int{"": 0, "0": 0, "-2": 0, "1500m": 0, "1025": 0, "3": 3, "1024": 1024} {
		got := device.CapacityDevices(node(v), "x.com/gpu", "x", tmpl)
		if len(got) != want {
			t.Errorf("capacity %q: %d devices, want %d", v, len(got), want)
		}
	}
	got := device.CapacityDevices(node("2"), "x.com/gpu", "x", tmpl)
	if got[1].ID != "n1-x-1" || got[1].Index != 1 || got[1].Type != "X" || got[0].ID != "n1-x-0" {
		t.Errorf("devices %+v", got)
	}
}
