package iluvatar_test

import (
	"testing"

	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/iluvatar"
)

// TestIluvatarRequest: HAMi's GenerateResourceRequests (pkg/device/iluvatar/device.go:201-252): vMem in 256 MiB
// units, 100 % memory when none is named, vCore as written (0 when unnamed); the webhook (92-118) sets the
// cores of a container of several GPUs to count x 100, which Fit clamps to 100 per GPU (316-319).
func TestIluvatarRequest(t *testing.T) {
	const w = "MR-V100"
	kinds := ft.Kinds(t, iluvatar.Family{})
	for _, tc := range []struct {
		name string
		kv   []any
		want string // "count MiB/percent cores device template"
	}{
		{"memory and cores", []any{"iluvatar.ai/" + w + "-vgpu", 1, "iluvatar.ai/" + w + ".vMem", 4, "iluvatar.ai/" + w + ".vCore", 30}, "1 1024/0 30 MR-V100 "},
		{"neither: the whole memory, no cores", []any{"iluvatar.ai/" + w + "-vgpu", 1}, "1 0/100 0 MR-V100 "},
		{"several GPUs take every core", []any{"iluvatar.ai/" + w + "-vgpu", 2, "iluvatar.ai/" + w + ".vMem", 4, "iluvatar.ai/" + w + ".vCore", 20}, "2 1024/0 100 MR-V100 "},
		{"another chip's resources", []any{"iluvatar.ai/BI-V150-vgpu", 1, "iluvatar.ai/BI-V150.vMem", 8}, "1 2048/0 0 BI-V150 "},
	} {
		got, problems := ft.Request(t, kinds, ft.MkPod("ns", "p", ft.Ctr("c", tc.kv...)))
		if got != tc.want || problems != "" {
			t.Errorf("%s: %q (problems %q), want %q", tc.name, got, problems, tc.want)
		}
	}
}

// TestIluvatarSection: the iluvatars section lists the chips, each a Kind of its own annotations and
// resources; an empty section is the chart's four.
func TestIluvatarSection(t *testing.T) {
	ks, err := iluvatar.Family{}.Kinds([]byte(`[{"commonWord":"X-1","resourceCountName":"x.io/gpu"}]`))
	if err != nil || len(ks) != 1 {
		t.Fatalf("kinds %+v, %v", ks, err)
	}
	k := ks[0]
	if k.Name != "X-1" || k.Register != "hami.io/node-X-1-register" || k.Allocated != "hami.io/X-1-devices-allocated" || k.Count != "x.io/gpu" || k.Memory != "iluvatar.ai/X-1.vMem" || k.MemoryFactor != 256 {
		t.Errorf("kind %+v", k)
	}
	if ks := ft.Kinds(t, iluvatar.Family{}); len(ks) != 4 || ks[0].Name != "MR-V100" || ks[3].Name != "BI-V100" {
		t.Errorf("chart defaults: %d kinds", len(ks))
	}
}
