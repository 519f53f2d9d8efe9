package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

func TestNamespaceQuota(t *testing.T) {
	node := mkNode("n1", gpus("n1", 4, 20000))
	used := placedOn(mkPod("ns", "used", tb.MakeContainer("c").GPUs(1).GPUMem(3000).GPUCores(20).Obj()), "n1", "n1-g0,NVIDIA,3000,20:;")
	cases := []struct {
		name   string
		cfg    func(*Config)
		quotas []*corev1.ResourceQuota
		pod    *corev1.Pod
		fits   bool
	}{
		{name: "absent key is unlimited", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpu", "1")},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(4).GPUMem(15000).Obj()), fits: true},
		{name: "explicit 0 blocks (v2.10)", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "0")},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1).Obj()), fits: false},
		{name: "requests. keys are not managed", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "requests.nvidia.com/gpumem", "1")},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), fits: true},
		{name: "per-GPU cumulative: 2 x 2000 against 4000 left fits", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "7000")},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(2).GPUMem(2000).Obj()), fits: true},
		{name: "per-GPU cumulative: 2 x 2001 against 4000 left does not", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "7000")},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(2).GPUMem(2001).Obj()), fits: false},
		{name: "percentage resolved per card: 25% of 20000 = 5000 > 4000 left", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "7000")},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMemPercent(25).Obj()), fits: false},
		{name: "percentage resolved per card: 20% = 4000 fits", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "7000")},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMemPercent(20).Obj()), fits: true},
		{name: "cores quota", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpucores", "50")},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(100).GPUCores(31).Obj()), fits: false},
		{name: "tightest of several ResourceQuotas wins", quotas: []*corev1.ResourceQuota{
			mkQuota("ns", "loose", "limits.nvidia.com/gpumem", "100000"), mkQuota("ns", "tight", "limits.nvidia.com/gpumem", "4000")},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1001).Obj()), fits: false},
		{name: "memoryFactor scales the limit", cfg: func(c *Config) { c.MemoryFactor = 2 },
			quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "3500")}, // 7000 MiB after the factor
			pod:    mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(2000).Obj()), fits: true}, // 4000 MiB after the factor
		{name: "a limit beyond 64 bits (1e30) is no limit, not 0", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "1e30")},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(4).GPUMem(15000).Obj()), fits: true},
		{name: "beyond 64 bits with a memory factor", cfg: func(c *Config) { c.MemoryFactor = 4 },
			quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "1e30", "limits.nvidia.com/gpucores", "9e18")},
			pod:    mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(10).Obj()), fits: true},
		{name: "other namespaces are not limited", quotas: []*corev1.ResourceQuota{mkQuota("other", "q", "limits.nvidia.com/gpumem", "0")},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), fits: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			c := NewCluster(cfg)
			c.SetNode(node)
			c.SetPod(used)
			for _, q := range tc.quotas {
				c.SetQuota(q)
			}
			v := c.Evaluate(tc.pod, EvalOptions{})
			if v.Fits != tc.fits {
				t.Fatalf("fits=%v, want %v: %s %v", v.Fits, tc.fits, v.Summary, v.Explanation)
			}
			if !tc.fits && v.Reasons[0].Code != ResourceQuotaNotFit {
				t.Fatalf("reason %v, want ResourceQuotaNotFit", v.Reasons)
			}
		})
	}
}

func TestQuotaBeyond64BitsIsAProblem(t *testing.T) {
	c := NewCluster(DefaultConfig())
	probs := c.SetQuota(mkQuota("ns", "huge", "limits.nvidia.com/gpumem", "1e30"))
	if len(probs) != 1 || probs[0].Field != "spec.hard[limits.nvidia.com/gpumem]" || probs[0].Message != "1e30 is beyond 64 bits; it is read as unlimited" {
		t.Fatalf("problems %+v", probs)
	}
	if q := c.Quota("ns"); q.Memory == nil || q.Memory.Limit < 1<<62 {
		t.Fatalf("memory line %+v: want an unlimited limit", q.Memory)
	}
}

func TestQuotaStatusAndRemoval(t *testing.T) {
	c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 2, 20000))},
		[]*corev1.Pod{placedOn(mkPod("ns", "a", tb.MakeContainer("c").GPUs(2).GPUMem(3000).GPUCores(10).Obj()), "n1", "n1-g0,NVIDIA,3000,10:n1-g1,NVIDIA,3000,10:;")},
		mkQuota("ns", "q", "limits.nvidia.com/gpumem", "10000", "limits.nvidia.com/gpucores", "100"))
	q := c.Quota("ns")
	if q.Memory == nil || q.Memory.Used != 6000 || q.Memory.Limit != 10000 || q.Memory.Source != "q" || q.Memory.Free() != 4000 {
		t.Fatalf("memory line %+v: want 6000 (2 GPUs x 3000) of 10000", q.Memory)
	}
	if q.Cores == nil || q.Cores.Used != 20 || q.Cores.Limit != 100 {
		t.Fatalf("cores line %+v", q.Cores)
	}
	c.RemovePod("ns", "a")
	if q := c.Quota("ns"); q.Memory.Used != 0 || q.Cores.Used != 0 {
		t.Fatalf("usage not released: %+v %+v", q.Memory, q.Cores)
	}
	c.RemoveQuota("ns", "q")
	if q := c.Quota("ns"); q.Limited() {
		t.Fatalf("quota still limited after removal: %+v", q)
	}
}
