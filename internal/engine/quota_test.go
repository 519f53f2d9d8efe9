package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNamespaceQuota(t *testing.T) {
	node := mkNode("n1", gpus("n1", 4, 20000))
	used := placedOn(mkPod("ns", "used", ctr("c", 1, 3000, -1, 20)), "n1", "n1-g0,NVIDIA,3000,20:;")
	cases := []struct {
		name   string
		cfg    func(*Config)
		quotas []*corev1.ResourceQuota
		pod    *corev1.Pod
		fits   bool
	}{
		{name: "absent key is unlimited", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpu", "1")},
			pod: mkPod("ns", "p", ctr("c", 4, 15000, -1, -1)), fits: true},
		{name: "explicit 0 blocks (v2.10)", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "0")},
			pod: mkPod("ns", "p", ctr("c", 1, 1, -1, -1)), fits: false},
		{name: "requests. keys are not managed", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "requests.nvidia.com/gpumem", "1")},
			pod: mkPod("ns", "p", ctr("c", 1, 1000, -1, -1)), fits: true},
		{name: "per-GPU cumulative: 2 x 2000 against 4000 left fits", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "7000")},
			pod: mkPod("ns", "p", ctr("c", 2, 2000, -1, -1)), fits: true},
		{name: "per-GPU cumulative: 2 x 2001 against 4000 left does not", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "7000")},
			pod: mkPod("ns", "p", ctr("c", 2, 2001, -1, -1)), fits: false},
		{name: "percentage resolved per card: 25% of 20000 = 5000 > 4000 left", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "7000")},
			pod: mkPod("ns", "p", ctr("c", 1, -1, 25, -1)), fits: false},
		{name: "percentage resolved per card: 20% = 4000 fits", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "7000")},
			pod: mkPod("ns", "p", ctr("c", 1, -1, 20, -1)), fits: true},
		{name: "cores quota", quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpucores", "50")},
			pod: mkPod("ns", "p", ctr("c", 1, 100, -1, 31)), fits: false},
		{name: "tightest of several ResourceQuotas wins", quotas: []*corev1.ResourceQuota{
			mkQuota("ns", "loose", "limits.nvidia.com/gpumem", "100000"), mkQuota("ns", "tight", "limits.nvidia.com/gpumem", "4000")},
			pod: mkPod("ns", "p", ctr("c", 1, 1001, -1, -1)), fits: false},
		{name: "memoryFactor scales the limit", cfg: func(c *Config) { c.MemoryFactor = 2 },
			quotas: []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "3500")}, // 7000 MiB after the factor
			pod:    mkPod("ns", "p", ctr("c", 1, 2000, -1, -1)), fits: true},                        // 4000 MiB after the factor
		{name: "other namespaces are not limited", quotas: []*corev1.ResourceQuota{mkQuota("other", "q", "limits.nvidia.com/gpumem", "0")},
			pod: mkPod("ns", "p", ctr("c", 1, 1000, -1, -1)), fits: true},
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

func TestQuotaStatusAndRemoval(t *testing.T) {
	c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 2, 20000))},
		[]*corev1.Pod{placedOn(mkPod("ns", "a", ctr("c", 2, 3000, -1, 10)), "n1", "n1-g0,NVIDIA,3000,10:n1-g1,NVIDIA,3000,10:;")},
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
