package engine

import (
	"testing"
)

func TestAdmit(t *testing.T) {
	cases := []struct {
		name                string
		in                  *ContainerRequest // what the admitted pod asks for
		count, mem, pct, co int64
		changes             int
	}{
		{name: "memory without count gets the default count", count: -1, mem: 4000, pct: -1, co: -1,
			in: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 4000}, changes: 1},
		{name: "count only: whole card, so 100% cores", count: 1, mem: -1, pct: -1, co: -1,
			in: &ContainerRequest{Name: "c", Count: 1, MemoryPercent: 100, MemoryDefaulted: true, Cores: 100}, changes: 1},
		{name: "percentage 100 and no cores: 100% cores", count: 2, mem: -1, pct: 100, co: -1,
			in: &ContainerRequest{Name: "c", Count: 2, MemoryPercent: 100, Cores: 100}, changes: 1},
		{name: "explicit cores are kept", count: 1, mem: -1, pct: -1, co: 20,
			in: &ContainerRequest{Name: "c", Count: 1, MemoryPercent: 100, MemoryDefaulted: true, Cores: 20}, changes: 0},
		{name: "partial memory needs nothing", count: 1, mem: 2000, pct: -1, co: -1,
			in: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 2000}, changes: 0},
		{name: "no GPU resources at all stay untouched", count: -1, mem: -1, pct: -1, co: -1, in: nil, changes: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			orig := mkPod("ns", "p", ctr("c", tc.count, tc.mem, tc.pct, tc.co))
			admitted, changes := Admit(orig, DefaultConfig())
			if len(changes) != tc.changes {
				t.Fatalf("changes %q, want %d", changes, tc.changes)
			}
			pr, _ := ParseRequest(admitted, DefaultConfig())
			if tc.in == nil {
				if pr.WantsGPU() {
					t.Fatalf("asks for %+v", pr.Containers)
				}
				return
			}
			if len(pr.Containers) != 1 || pr.Containers[0] != *tc.in {
				t.Fatalf("admitted request %+v, want %+v", pr.Containers, *tc.in)
			}
			if _, ok := orig.Spec.Containers[0].Resources.Limits["nvidia.com/gpucores"]; ok && tc.co < 0 {
				t.Fatalf("Admit changed its input")
			}
		})
	}
}
