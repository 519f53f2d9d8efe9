//go:build linux && cgo

package nvmlsource

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// TestMigInstances creates, lists and destroys MIG instances on the DGX H100 mock.
func TestMigInstances(t *testing.T) {
	m := newMockGPUs(t, dgxh100.New())
	m.EnableMIG(0)
	src := m.source()
	gpu, other := m.dev[0].UUID, m.dev[1].UUID

	if _, err := src.CreateMigInstance(other, "1g.10gb", codec.MigPlacement{Start: 0, Size: 1}); err == nil ||
		!strings.Contains(err.Error(), "is not in MIG mode (the agent never changes a GPU's MIG mode)") {
		t.Errorf("a GPU without MIG mode: %v", err)
	}
	if cur, _, _ := m.dev[1].GetMigMode(); cur != nvml.DEVICE_MIG_DISABLE {
		t.Errorf("MIG mode of GPU 1 changed to %d", cur)
	}
	for _, tc := range []struct {
		profile string
		pl      codec.MigPlacement
		want    string
	}{
		{"5g.99gb", codec.MigPlacement{Start: 0, Size: 1}, `offers no MIG profile "5g.99gb" (it offers 1g.10gb, 2g.20gb`},
		{"3g.40gb", codec.MigPlacement{Start: 1, Size: 4}, "MIG profile 3g.40gb cannot be placed at slices [1,5) (NVML offers [0,3) [4,7))"},
	} {
		if _, err := src.CreateMigInstance(gpu, tc.profile, tc.pl); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s at %+v: %v, want %q", tc.profile, tc.pl, err, tc.want)
		}
	}

	a, err := src.CreateMigInstance(gpu, "2g.20gb", codec.MigPlacement{Start: 2, Size: 2})
	if err != nil {
		t.Fatal(err)
	}
	if a.GPUUUID != gpu || a.Profile != "2g.20gb" || !a.HasComputeInstance || a.MigUUID != m.MigUUID(0, a.GPUInstanceID) || a.Busy {
		t.Errorf("created %+v", a)
	}
	if _, err := src.CreateMigInstance(gpu, "1g.10gb", codec.MigPlacement{Start: 3, Size: 1}); err == nil ||
		!strings.Contains(err.Error(), "cannot create MIG instance 1g.10gb at slices [3,4): NVML CreateGpuInstanceWithPlacement: ") {
		t.Errorf("an overlapping placement: %v", err)
	}
	// A GPU instance left without a compute instance gets one instead of a second GPU instance.
	info, _ := m.dev[0].GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_1_SLICE)
	bare, ret := m.dev[0].CreateGpuInstanceWithPlacement(&info, &nvml.GpuInstancePlacement{Start: 6, Size: 1})
	if ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	listed, err := src.MigInstances()
	if err != nil || len(listed) != 2 || listed[1].HasComputeInstance || listed[1].MigUUID != "" {
		t.Fatalf("instances %+v (%v); want the 2g and a bare 1g", listed, err)
	}
	b, err := src.CreateMigInstance(gpu, "1g.10gb", codec.MigPlacement{Start: 6, Size: 1})
	if bareInfo, _ := bare.GetInfo(); err != nil || b.GPUInstanceID != bareInfo.Id || !b.HasComputeInstance {
		t.Fatalf("completing the bare instance: %+v, %v", b, err)
	}
	m.SetMigProcesses(0, b.GPUInstanceID, nvml.ProcessInfo{Pid: 9})
	if listed, _ = src.MigInstances(); len(listed) != 2 || listed[0] != a || !listed[1].Busy {
		t.Errorf("instances %+v; want the 2g as created and the 1g busy", listed)
	}
	// Ids are reused: an instance is destroyed only at the placement it was listed at.
	moved := a
	moved.Placement.Start = 4
	if err := src.DestroyMigInstance(moved); err == nil || !strings.Contains(err.Error(), "not destroyed") {
		t.Errorf("destroying an instance at another placement: %v", err)
	}
	for _, in := range []struct {
		name string
		err  error
	}{{"a", src.DestroyMigInstance(a)}, {"b", src.DestroyMigInstance(b)}, {"a again", src.DestroyMigInstance(a)}} {
		if in.err != nil {
			t.Errorf("destroy %s: %v", in.name, in.err)
		}
	}
	if n := len(m.GpuInstances(0)); n != 0 {
		t.Errorf("%d GPU instances left", n)
	}
}
