package tui

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestBinaryInTmuxFollow drives the built binary against a real kube-apiserver at 80x24 and 200x60: pages
// follow the cluster while they are open. A why-pending page at ResourceQuotaNotFit shows the placement once
// the quota is raised, and says so when the pod is deleted; the Node and GPU pages of a deleted node say it
// is gone; a new pod's age ticks with no change in the cluster; `:ctx NAME` switches the kubeconfig context.
func TestBinaryInTmuxFollow(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not on PATH (%v): run `bash hack/ensure-tmux.sh` to install it", err)
	}
	bin := buildBinary(t)
	env := testenv.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	loadDemoInto(t, ctx, env.Client)

	// A second context on the same cluster, for `:ctx`.
	kc, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	second := *kc.Contexts[testenv.ContextName]
	kc.Contexts["second"] = &second
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}

	small := startTmux(t, 80, 24, bin, "top", "--kubeconfig", kubeconfig)
	large := startTmux(t, 200, 60, bin, "top", "--kubeconfig", kubeconfig)
	both := []*tmux{small, large}
	for _, tm := range both {
		tm.waitFor("the live first frame", "● live", "19 GPU pods", "8 pending")
		tm.keys(":")
		tm.text("pending llm-serve-2")
		tm.keys("Enter", "Enter")
		tm.waitFor("the why-pending page", "Why pending: inference/llm-serve-2", "ResourceQuotaNotFit")
	}

	// The quota is raised while the pages are open: they re-evaluate and show where the pod goes.
	quotas := env.Client.CoreV1().ResourceQuotas("inference")
	q, err := quotas.Get(ctx, "gpu-quota", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard["limits.nvidia.com/gpumem"] = resource.MustParse("200k")
	if _, err := quotas.Update(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tm := range both {
		tm.waitFor("the page re-evaluated on the raised quota", "Why pending: inference/llm-serve-2", "Placement on gpu-")
		if s := tm.screen(); strings.Contains(s, "ResourceQuotaNotFit") {
			t.Errorf("the open page still says ResourceQuotaNotFit after the quota was raised:\n%s", s)
		}
	}

	// The pod is deleted: the page says so and keeps its last explanation.
	now := int64(0)
	if err := env.Client.CoreV1().Pods("inference").Delete(ctx, "llm-serve-2", metav1.DeleteOptions{GracePeriodSeconds: &now}); err != nil {
		t.Fatal(err)
	}
	for _, tm := range both {
		tm.waitFor("the deleted pod's page", "gone: deleted from the cluster at", "Placement on gpu-", "7 pending")
	}

	// The Node page (80x24) and a GPU page (200x60) of a node that is then deleted.
	small.keys(":")
	small.text("node gpu-t4-02")
	small.keys("Enter")
	small.waitFor("the Node page", "gpu-t4-02 · 4 GPUs")
	large.keys(":")
	large.text("node gpu-t4-02")
	large.keys("Enter", "Enter")
	large.waitFor("the GPU page", "gpu-t4-02 #0", "GPU-gpu-t4-02-0")
	if err := env.Client.CoreV1().Nodes().Delete(ctx, "gpu-t4-02", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	small.waitFor("the deleted node's page", "node gpu-t4-02 is gone", "10 nodes")
	large.waitFor("the deleted node's GPU page", "GPU GPU-gpu-t4-02-0 is gone from node gpu-t4-02", "10 nodes")

	// Ages tick between changes: a new pending pod's AGE moves on with nothing else changing.
	if _, err := env.Client.CoreV1().Pods("team-vision").Create(ctx, gpuPod("team-vision", "age-ticker", "", "", 8000, 10), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	large.keys("4", "Escape") // esc clears the filter of the first step
	large.waitFor("the new pod in Pending", "age-ticker")
	ageOf := func(s string) string {
		m := regexp.MustCompile(`age-ticker\s+\d+\s+(\S+)`).FindStringSubmatch(lineWith(s, "age-ticker"))
		if m == nil {
			return ""
		}
		return m[1]
	}
	first := ageOf(large.screen())
	if first == "" {
		t.Fatalf("no AGE on age-ticker's row:\n%s", large.screen())
	}
	large.waitUntil("age-ticker's age to tick from "+first, func(s string) bool { a := ageOf(s); return a != "" && a != first })

	// :ctx names the contexts; :ctx NAME starts the UI again on that one.
	for _, tm := range both {
		tm.keys(":")
		tm.text("ctx")
		tm.keys("Enter")
		tm.waitFor("the contexts", "context testenv · :ctx NAME switches (second, testenv)")
		tm.keys(":")
		tm.text("ctx sec")
		tm.keys("Enter")
		tm.waitFor("the UI on the second context", "context second", "● live", "10 nodes")
	}
	for _, tm := range both {
		tm.keys("q")
		tm.waitExit()
	}
}
