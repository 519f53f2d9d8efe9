package cli

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestLintLive runs lint against a real kube-apiserver holding the demo cluster and its Volcano queues: it
// finds what it finds on the demo. Then a misspelled ResourceQuota key and an unreadable card quota, written
// through the API, become findings, and the unreadable quota is a second error.
func TestLintLive(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	loadDemo(t, env.Client)
	loadDemoVolcano(t, env)
	args := []string{"lint", "--kubeconfig", env.Kubeconfig}

	// The demo has warnings and no error (a cluster that could exist): lint passes on both.
	got, errOut, err := runB(t, args...)
	if err != nil || errOut != "" {
		t.Fatalf("lint: %v, want no error\n%s", err, errOut)
	}
	want, _, err := runB(t, "lint", "--demo")
	if err != nil {
		t.Fatalf("lint --demo: %v, want no error", err)
	}
	if h := firstLine(got); !strings.HasPrefix(h, "Source: cluster "+env.APIServerURL+" ") {
		t.Errorf("header %q does not name the cluster", h)
	}
	counts := func(header string) string { _, c, _ := strings.Cut(header, "   Findings: "); return c }
	if g, w := counts(firstLine(got)), counts(firstLine(want)); g != w || g == "" {
		t.Errorf("header differs from the demo's:\n live: %s\n demo: %s", g, w)
	}
	afterHeader := func(s string) string { _, rest, _ := strings.Cut(s, "\n"); return rest }
	if g, w := afterHeader(got), afterHeader(want); g != w {
		t.Errorf("live findings differ from the demo's: %s", diff(w, g))
	}

	ctx := context.Background()
	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "typo", Namespace: "inference"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"limits.nvidia.com/gpumemory": resource.MustParse("1000")}}}
	if _, err := env.Client.CoreV1().ResourceQuotas("inference").Create(ctx, rq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn := env.Dynamic(t)
	q, err := dyn.Resource(snapshot.QueueGVR).Get(ctx, "serving", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ann := q.GetAnnotations()
	ann["volcano.sh/card.quota"] = `{"NVIDIA-H100-80GB-HBM3": "2"}`
	q.SetAnnotations(ann)
	if _, err := dyn.Resource(snapshot.QueueGVR).Update(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	got, _, err = runB(t, args...)
	if err == nil || err.Error() != "lint found 1 error" {
		t.Errorf("lint after the bad quota: error %v, want lint found 1 error", err)
	}
	for _, w := range []string{
		"ERROR    Queue serving  metadata.annotations[volcano.sh/card.quota]  (card-quota-unparsable)",
		`fix:     kubectl annotate queue serving volcano.sh/card.quota='{"NVIDIA-H100-80GB-HBM3":2}' --overwrite`,
		"WARNING  ResourceQuota inference/typo  spec.hard[limits.nvidia.com/gpumemory]  (quota-key-ignored)",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("live lint lacks %q:\n%s", w, got)
		}
	}
}
