package codec

import (
	"reflect"
	"testing"
)

func TestParseMigAllocations(t *testing.T) {
	one := uint32(1)
	zero := uint32(0)
	tests := []struct {
		name  string
		value string
		want  []MigAllocation
	}{
		{"reserved", `[{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.10gb","placement":{"start":2,"size":1}}]`,
			[]MigAllocation{{GPUUUID: "GPU-a", Profile: "1g.10gb", Placement: MigPlacement{Start: 2, Size: 1}}}},
		{"created", `[{"containerIndex":1,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"3g.40gb","placement":{"start":4,"size":4},` +
			`"migUUID":"MIG-x","gpuInstanceID":1,"computeInstanceID":0}]`,
			[]MigAllocation{{ContainerIndex: 1, GPUUUID: "GPU-a", Profile: "3g.40gb", Placement: MigPlacement{Start: 4, Size: 4},
				MigUUID: "MIG-x", GPUInstanceID: &one, ComputeInstanceID: &zero}}},
		{"empty", `[]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMigAllocations(tt.value)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseMigAllocationsErrors(t *testing.T) {
	ok := `{"gpuUUID":"GPU-a","profile":"1g.10gb","placement":{"start":0,"size":1}}`
	tests := []struct {
		name  string
		value string
		want  []string
	}{
		{"empty", "", []string{"empty value"}},
		{"syntax", `[` + ok + `,]`, []string{"offset", "invalid character"}},
		{"empty uuid", `[` + ok + `,{"profile":"1g.10gb","placement":{"start":0,"size":1}}]`, []string{"element 1, field gpuUUID", "is empty"}},
		{"negative start", `[{"gpuUUID":"GPU-a","placement":{"start":-1,"size":1}}]`, []string{"element 0, field placement.start", `"-1" is negative`}},
		{"zero size", `[` + ok + `,` + ok + `,{"gpuUUID":"GPU-a","placement":{"start":0,"size":0}}]`, []string{"element 2, field placement.size", "not positive"}},
		{"missing placement", `[{"gpuUUID":"GPU-a"}]`, []string{"element 0, field placement.size"}},
		{"negative container", `[{"gpuUUID":"GPU-a","containerIndex":-1,"placement":{"start":0,"size":1}}]`, []string{"element 0, field containerIndex"}},
		{"negative device", `[{"gpuUUID":"GPU-a","deviceIndex":-1,"placement":{"start":0,"size":1}}]`, []string{"element 0, field deviceIndex"}},
		{"negative instance id", `[{"gpuUUID":"GPU-a","gpuInstanceID":-1,"placement":{"start":0,"size":1}}]`, []string{"offset", "gpuInstanceID"}},
		{"null element", `[null]`, []string{"element 0, field gpuUUID"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMigAllocations(tt.value)
			if err == nil {
				t.Fatalf("no error, got %+v", got)
			}
			checkErr(t, err, PodMigAllocationsAnnotation, tt.want...)
		})
	}
}

func TestMigAllocationsRoundTrip(t *testing.T) {
	gi, ci := uint32(2), uint32(0)
	for _, as := range [][]MigAllocation{
		nil,
		{
			{ContainerIndex: 0, DeviceIndex: 0, GPUUUID: "GPU-a", Profile: "1g.10gb", Placement: MigPlacement{Start: 6, Size: 1}},
			{ContainerIndex: 2, DeviceIndex: 1, GPUUUID: "GPU-b", Profile: "4g.40gb", Placement: MigPlacement{Start: 0, Size: 4},
				MigUUID: "MIG-1", GPUInstanceID: &gi, ComputeInstanceID: &ci},
		},
	} {
		s := FormatMigAllocations(as)
		got, err := ParseMigAllocations(s)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		if !reflect.DeepEqual(got, as) {
			t.Errorf("round trip of %q: got %+v, want %+v", s, got, as)
		}
	}
}
