package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// TestPodAllocationJSONRoundTrip: an allocation written (by pointer and by value) and read back is the same,
// its MIG instances and other types' quota charges included, and they are written in their places.
func TestPodAllocationJSONRoundTrip(t *testing.T) {
	a := &PodAllocation{Namespace: "ns", Name: "p", Node: "n1",
		Containers: []ContainerAllocation{{Name: "c", Devices: []codec.ContainerDevice{{UUID: "GPU-1", Type: "NVIDIA", UsedMem: 1000, UsedCores: 10}}}},
		Uses:       []GPUUse{{UUID: "GPU-1", Slots: 1, Mem: 1000, Cores: 10}}, QuotaMem: 1000, QuotaCores: 10, Terminating: true}
	a.rareFields().mig = []codec.MigAllocation{{GPUUUID: "GPU-1", Profile: "1g.10gb"}}
	a.setVendorQuota(map[string]int64{"limits.hygon.com/dcumem": 2048})
	byPointer, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	byValue, err := json.Marshal(map[string]PodAllocation{"a": *a})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":` + string(byPointer) + `}`; string(byValue) != want {
		t.Fatalf("by value\n  %s\nby pointer\n  %s", byValue, want)
	}
	want := `{"namespace":"ns","name":"p","node":"n1","containers":[{"name":"c","devices":[{"uuid":"GPU-1","type":"NVIDIA","usedMem":1000,"usedCores":10}]}],` +
		`"uses":[{"uuid":"GPU-1","slots":1,"memMiB":1000,"cores":10}],"mig":[{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-1","profile":"1g.10gb","placement":{"start":0,"size":0}}],` +
		`"quotaMemMiB":1000,"quotaCores":10,"vendorQuota":{"limits.hygon.com/dcumem":2048},"terminating":true}`
	if string(byPointer) != want {
		t.Fatalf("written\n  %s\nwant\n  %s", byPointer, want)
	}
	var back PodAllocation
	if err := json.Unmarshal(byPointer, &back); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(&back); string(again) != want {
		t.Fatalf("read back and written again\n  %s\nwant\n  %s", again, want)
	}
	if !reflect.DeepEqual(back.Mig(), a.Mig()) || !reflect.DeepEqual(back.VendorQuota(), a.VendorQuota()) {
		t.Fatalf("read back: mig %+v vendor quota %v", back.Mig(), back.VendorQuota())
	}
	var none PodAllocation
	if err := json.Unmarshal([]byte(`{"namespace":"ns","name":"q","node":"n1","containers":null,"uses":null,"quotaMemMiB":0,"quotaCores":0}`), &none); err != nil || none.rare != nil {
		t.Fatalf("an allocation without MIG or vendor quota: err %v, podRare %+v", err, none.rare)
	}
}

// TestPodAllocationBlockStaysSmall: every counted pod keeps one block (bulk.go); a field that grows it grows
// a large cluster's model by its size times the pods (300k pods: 300 KB a byte).
func TestPodAllocationBlockStaysSmall(t *testing.T) {
	if got, limit := reflect.TypeOf(podAllocationBlock{}).Size(), uintptr(256); got > limit {
		t.Fatalf("podAllocationBlock is %d bytes, more than %d", got, limit)
	}
}
