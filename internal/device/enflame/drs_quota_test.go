package enflame_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device/enflame"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
)

// TestDRSWebhookQuota: HAMi's webhook checks DRS-GCU's quota keys (pkg/scheduler/webhook.go:145-189) with
// what GenerateResourceRequests reads (pkg/device/enflame/device.go:321-365), before any node's profile: a
// slice count is memory in slices against limits.enflame.com/gcu-memory, a memory and cores request counts
// them as written; the namespace's use is the counted pods' device lists (MiB and %, quota.go:97-117).
func TestDRSWebhookQuota(t *testing.T) {
	kinds := ft.Kinds(t, enflame.Family{})
	cases := []struct {
		name string
		hard map[string]string
		used []*corev1.Pod
		pod  map[string]string
		want string // "" when admitted
	}{
		{"a slice count is memory in slices", map[string]string{"limits." + gcuMem: "6"}, nil, map[string]string{drsGCU: "7"},
			"exceeding resource quota: limits.enflame.com/gcu-memory in ResourceQuota q: 0 MiB used + 7 MiB asked > 6 MiB limit"},
		{"within the limit", map[string]string{"limits." + gcuMem: "7"}, nil, map[string]string{drsGCU: "7"}, ""},
		{"a zero limit refuses every slice", map[string]string{"limits." + gcuMem: "0"}, nil, map[string]string{drsGCU: "1"},
			"exceeding resource quota: limits.enflame.com/gcu-memory in ResourceQuota q: 0 MiB used + 1 MiB asked > 0 MiB limit"},
		{"memory and cores as written", map[string]string{"limits." + gcuCore: "40"}, nil, map[string]string{gcuMem: "16", gcuCore: "50"},
			"exceeding resource quota: limits.enflame.com/gcu-core in ResourceQuota q: 0 % used + 50 % asked > 40 % limit"},
		{"a counted slice's MiB count against it", map[string]string{"limits." + gcuMem: "20000"}, []*corev1.Pod{onDRS("u", [3]int{0, 20480, 50})},
			map[string]string{drsGCU: "1"},
			"exceeding resource quota: limits.enflame.com/gcu-memory in ResourceQuota q: 20480 MiB used + 1 MiB asked > 20000 MiB limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := ft.NewWorld(t, kinds, []*corev1.Node{drsNode(6, 6)})
			for _, p := range tc.used {
				p.Namespace = "ns"
				if probs := w.C.SetPod(p); len(probs) > 0 {
					t.Fatal(probs)
				}
			}
			rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
			for k, v := range tc.hard {
				rq.Spec.Hard[corev1.ResourceName(k)] = resource.MustParse(v)
			}
			w.C.SetQuota(rq)
			got := ""
			if r := w.C.WebhookRefusal(ft.Pod("p", nil, tc.pod)); r != nil {
				got = r.String()
			}
			if got != tc.want {
				t.Errorf("refusal %q, want %q", got, tc.want)
			}
		})
	}
}
