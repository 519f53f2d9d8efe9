package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// TestWebhookQuotaOfARequestResolvedPerNode: a family whose request becomes memory and cores only on a node
// (Enflame DRS-GCU, resolved against each node's profiles) has HAMi's webhook count what its
// GenerateResourceRequests reads (pkg/device/enflame/device.go:321-365: the slices, or memory and cores as
// written) against its quota keys (pkg/scheduler/webhook.go:157-189); the reader says so in
// device.Ask.WebhookMemory and WebhookCores.
func TestWebhookQuotaOfARequestResolvedPerNode(t *testing.T) {
	const count, mem, cores = "acme.io/slices", "acme.io/slice-memory", "acme.io/slice-core"
	kind := device.Kind{Vendor: "acme", Name: "Slice", Word: "slice", Register: "acme.io/register",
		ToAllocate: "hami.io/acme-devices-to-allocate", Allocated: "hami.io/acme-devices-allocated",
		Count: count, Memory: mem, Cores: cores,
		Asks: func(k *device.Kind, r *device.Reading) bool {
			return r.Names(k.Count) || r.Names(k.Memory) || r.Names(k.Cores)
		},
		ReadRequest: func(k *device.Kind, r *device.Reading) (device.Ask, bool) {
			if n, ok := r.Value(k.Count); ok {
				return device.Ask{Count: 1, WebhookMemory: n}, true
			}
			m, _ := r.Value(k.Memory)
			c, _ := r.Value(k.Cores)
			return device.Ask{Count: 1, WebhookMemory: m, WebhookCores: c}, true
		}}
	cfg := DefaultConfig()
	cfg.Vendors = []device.Kind{kind}
	ctr := func(kv ...any) corev1.Container {
		l := corev1.ResourceList{}
		for i := 0; i+1 < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i].(string))] = *resource.NewQuantity(int64(kv[i+1].(int)), resource.DecimalSI)
		}
		return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Limits: l}}
	}
	cases := []struct {
		name  string
		quota []string
		pod   *corev1.Pod
		want  string // "" when admitted
	}{
		{"slices against the memory key", []string{"limits." + mem, "6"}, mkPod("ns", "p", ctr(count, 7)),
			"exceeding resource quota: limits.acme.io/slice-memory in ResourceQuota q: 0 MiB used + 7 MiB asked > 6 MiB limit"},
		{"slices within it", []string{"limits." + mem, "7"}, mkPod("ns", "p", ctr(count, 7)), ""},
		{"memory and cores as written", []string{"limits." + cores, "40"}, mkPod("ns", "p", ctr(mem, 16, cores, 50)),
			"exceeding resource quota: limits.acme.io/slice-core in ResourceQuota q: 0 % used + 50 % asked > 40 % limit"},
		{"a zero memory limit refuses any slice", []string{"limits." + mem, "0"}, mkPod("ns", "p", ctr(count, 1)),
			"exceeding resource quota: limits.acme.io/slice-memory in ResourceQuota q: 0 MiB used + 1 MiB asked > 0 MiB limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCluster(cfg)
			c.SetQuota(mkQuota("ns", "q", tc.quota...))
			got := ""
			if r := c.WebhookRefusal(tc.pod); r != nil {
				got = r.String()
			}
			if got != tc.want {
				t.Errorf("refusal %q, want %q", got, tc.want)
			}
		})
	}
}
