package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// TestCapacityLimitNamesTheQuota: when copies stop while a node's GPUs would take one more, Capacity names the
// namespace quota that refuses it; when the GPUs are full, no limit is named.
func TestCapacityLimitNamesTheQuota(t *testing.T) {
	node := mkNode("n1", gpus("n1", 4, 16000))
	cases := []struct {
		name     string
		quota    string // limits.nvidia.com/gpumem of the namespace, "" for none
		mem      int64
		copies   int
		wantCode Code
		wantHave int64
	}{
		{"quota stops at 3 of 4", "30000", 10000, 3, ResourceQuotaNotFit, 0},
		{"quota leaves a remainder", "25000", 10000, 2, ResourceQuotaNotFit, 5000},
		{"GPUs full, quota roomy", "100000", 10000, 4, "", 0},
		{"no quota", "", 10000, 4, "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c *Cluster
			if tc.quota != "" {
				c = newTestCluster([]*corev1.Node{node}, nil, mkQuota("ns", "gpu-quota", "limits.nvidia.com/gpumem", tc.quota))
			} else {
				c = newTestCluster([]*corev1.Node{node}, nil)
			}
			cp := c.Capacity(mkPod("ns", "p", tb.MakeContainer("main").GPUs(1).GPUMem(tc.mem).GPUCores(0).Obj()), 100)
			if cp.Copies != tc.copies {
				t.Fatalf("copies = %d, want %d", cp.Copies, tc.copies)
			}
			if tc.wantCode == "" {
				if cp.Limit != nil {
					t.Fatalf("limit = %+v, want none: the GPUs are full", *cp.Limit)
				}
				return
			}
			if cp.Limit == nil || cp.Limit.Code != tc.wantCode || cp.Limit.Have != tc.wantHave || cp.Limit.Need != tc.mem {
				t.Fatalf("limit = %+v, want %s with %d left for %d", cp.Limit, tc.wantCode, tc.wantHave, tc.mem)
			}
		})
	}
}

// TestCapacityLimitNamesTheCardQuota: a queue's card quota that stops copies while the node has GPUs left is
// named as the limit.
func TestCapacityLimitNamesTheCardQuota(t *testing.T) {
	c := newTestCluster([]*corev1.Node{cardNode("h200-a", "NVIDIA-H200", 4, 80000)}, nil)
	setQueue(t, c, "q1", `{"NVIDIA-H200":2}`)
	cp := c.Capacity(cardPodOf("p", "NVIDIA-H200", "q1", 1), 100)
	if cp.Copies != 2 {
		t.Fatalf("copies = %d, want 2 (the quota)", cp.Copies)
	}
	if cp.Limit == nil || cp.Limit.Code != QueueCardQuotaNotFit || cp.Limit.Detail != "queue q1: NVIDIA-H200 2 of 2 used, the pod needs 1" {
		t.Fatalf("limit = %+v, want the queue's card quota", cp.Limit)
	}
	// With more quota than the GPUs' slots and memory hold, the GPUs are the limit.
	setQueue(t, c, "q1", `{"NVIDIA-H200":1000}`)
	if cp := c.Capacity(cardPodOf("p", "NVIDIA-H200", "q1", 1), 1000); cp.Copies <= 2 || cp.Copies >= 1000 || cp.Limit != nil {
		t.Fatalf("copies %d, limit %+v; want the GPUs full and no quota named", cp.Copies, cp.Limit)
	}
}
