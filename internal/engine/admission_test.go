package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

func TestAdmit(t *testing.T) {
	cases := []struct {
		name    string
		in      *ContainerRequest // what the admitted pod asks for
		ctr     corev1.Container
		changes int
	}{
		{name: "memory without count gets the default count", ctr: tb.MakeContainer("c").GPUMem(4000).Obj(),
			in: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 4000}, changes: 1},
		{name: "count only: whole card, so 100% cores", ctr: tb.MakeContainer("c").GPUs(1).Obj(),
			in: &ContainerRequest{Name: "c", Count: 1, MemoryPercent: 100, MemoryDefaulted: true, Cores: 100}, changes: 1},
		{name: "percentage 100 and no cores: 100% cores", ctr: tb.MakeContainer("c").GPUs(2).GPUMemPercent(100).Obj(),
			in: &ContainerRequest{Name: "c", Count: 2, MemoryPercent: 100, Cores: 100}, changes: 1},
		{name: "explicit cores are kept", ctr: tb.MakeContainer("c").GPUs(1).GPUCores(20).Obj(),
			in: &ContainerRequest{Name: "c", Count: 1, MemoryPercent: 100, MemoryDefaulted: true, Cores: 20}, changes: 0},
		{name: "partial memory needs nothing", ctr: tb.MakeContainer("c").GPUs(1).GPUMem(2000).Obj(),
			in: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 2000}, changes: 0},
		{name: "no GPU resources at all stay untouched", ctr: tb.MakeContainer("c").Obj(), in: nil, changes: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			orig := mkPod("ns", "p", tc.ctr)
			_, hadCores := orig.Spec.Containers[0].Resources.Limits["nvidia.com/gpucores"]
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
			if _, ok := orig.Spec.Containers[0].Resources.Limits["nvidia.com/gpucores"]; ok && !hadCores {
				t.Fatalf("Admit changed its input")
			}
		})
	}
}
