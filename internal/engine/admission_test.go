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

// TestWebhookRefusalHAMiRules are HAMi v2.10.0's webhook rules beyond NVIDIA's quota: the values a family's
// MutateAdmission refuses, every family's limits. quota keys (pkg/scheduler/webhook.go:145-189), and no
// quota check for a family the pod asks no memory and no cores of (webhook.go:181-183).
func TestWebhookRefusalHAMiRules(t *testing.T) {
	nodes := []*corev1.Node{mkNode("n1", gpus("n1", 2, 16384)),
		vendorNode("d1", dcuReg, vdevs("d1", "dcu", "DCU-Z100", 2, 32768, 100, 4))}
	used := []*corev1.Pod{placedOn(mkPod("ns", "x", tb.MakeContainer("c").GPUs(1).GPUMem(3000).GPUCores(30).Obj()), "n1", "n1-g0,NVIDIA,3000,30:;")}
	quotas := []*corev1.ResourceQuota{mkQuota("ns", "gpu", "limits.nvidia.com/gpumem", "0"),
		mkQuota("ns", "dcu", "limits."+dcuCores, "50", "limits."+dcuMem, "100000")}
	const amdNum, amdCores = "amd.com/gpu", "amd.com/gpucores"
	cases := []struct {
		name string
		pod  *corev1.Pod
		want string // "" for admitted
	}{
		{"gpumem-percentage above 100", mkPod("other", "p", tb.MakeContainer("main").GPUs(1).GPUMemPercent(120).Obj()),
			"invalid nvidia.com/gpumem-percentage value 120 in container main: must be an integer between 0 and 100"},
		{"gpumem-percentage 100", mkPod("other", "p", tb.MakeContainer("main").GPUs(1).GPUMemPercent(100).Obj()), ""},
		{"gpumem-percentage 0", mkPod("other", "p", tb.MakeContainer("main").GPUs(1).GPUMemPercent(0).Obj()), ""},
		{"amd.com/gpucores 0", mkPod("other", "p", vctr("main", amdNum, 1, amdCores, 0)),
			"container main: amd.com/gpucores 0 is not an integer percentage between 1 and 100"},
		{"amd.com/gpucores 150", mkPod("other", "p", vctr("main", amdNum, 1, amdCores, 150)),
			"container main: amd.com/gpucores 150 is not an integer percentage between 1 and 100"},
		{"amd.com/gpucores 100", mkPod("other", "p", vctr("main", amdNum, 1, amdCores, 100)), ""},
		{"an NVIDIA pod asking no memory and no cores skips the quota", mkPod("ns", "p", tb.MakeContainer("main").GPUs(1).GPUMemPercent(50).Obj()), ""},
		{"an NVIDIA pod asking cores is checked against the memory limit too", mkPod("ns", "p", tb.MakeContainer("main").GPUs(1).GPUMemPercent(50).GPUCores(10).Obj()),
			"exceeding resource quota: limits.nvidia.com/gpumem in ResourceQuota gpu: 3000 MiB used + 0 MiB asked > 0 MiB limit"},
		{"Hygon's default 100 % cores against its quota", mkPod("ns", "p", vctr("main", dcuNum, 2)),
			"exceeding resource quota: limits.hygon.com/dcucores in ResourceQuota dcu: 0 % used + 200 % asked > 50 % limit"},
		{"Hygon cores above 100 count as written", mkPod("ns", "p", vctr("main", dcuNum, 1, dcuMem, 1000, dcuCores, 40), vctr("second", dcuNum, 1, dcuMem, 1000, dcuCores, 150)),
			"exceeding resource quota: limits.hygon.com/dcucores in ResourceQuota dcu: 0 % used + 190 % asked > 50 % limit"},
		{"Hygon within its quota", mkPod("ns", "p", vctr("main", dcuNum, 1, dcuMem, 1000, dcuCores, 50)), ""},
	}
	c := newTestCluster(nodes, used, quotas...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.WebhookRefusal(tc.pod)
			got := ""
			if r != nil {
				got = r.String()
			}
			if got != tc.want {
				t.Errorf("refusal %q, want %q", got, tc.want)
			}
		})
	}
}
