package iluvatar_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/iluvatar"
)

// HAMi's webhook checks Iluvatar's quota keys with the request its MutateAdmission leaves
// (pkg/device/iluvatar/device.go:92-118): a container asking for several GPUs has its vCore set to count x
// 100, which GenerateResourceRequests (201-254) reads per GPU, so fitResourceQuota (pkg/scheduler/
// webhook.go:157-189) counts count x count x 100 against limits.<vCore>, whatever vCore the pod wrote.
func TestIluvatarWebhookQuota(t *testing.T) {
	const w = "MR-V50"
	cores := "iluvatar.ai/" + w + ".vCore"
	ask := func(count, vcore string) map[string]string {
		return map[string]string{"iluvatar.ai/" + w + "-vgpu": count, "iluvatar.ai/" + w + ".vMem": "4", cores: vcore}
	}
	cases := []struct {
		name  string
		limit string
		pod   map[string]string
		want  string // "" when admitted
	}{
		{"two GPUs count 2 x 200 %, not the 2 x 10 % written", "200", ask("2", "10"),
			"exceeding resource quota: limits." + cores + " in ResourceQuota q: 0 % used + 400 % asked > 200 % limit"},
		{"two GPUs within a limit of 400", "400", ask("2", "10"), ""},
		{"one GPU keeps its vCore", "200", ask("1", "10"), ""},
		{"one GPU above 100 counts as written", "100", ask("1", "150"),
			"exceeding resource quota: limits." + cores + " in ResourceQuota q: 0 % used + 150 % asked > 100 % limit"},
	}
	kinds := ft.Kinds(t, iluvatar.Family{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			world := ft.NewWorld(t, kinds, nil)
			if probs := world.C.SetQuota(&corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q"},
				Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceName("limits." + cores): resource.MustParse(tc.limit)}}}); len(probs) > 0 {
				t.Fatal(probs)
			}
			got := ""
			if r := world.C.WebhookRefusal(ft.Pod("p", nil, tc.pod)); r != nil {
				got = r.String()
			}
			if got != tc.want {
				t.Errorf("refusal %q, want %q", got, tc.want)
			}
		})
	}
}
