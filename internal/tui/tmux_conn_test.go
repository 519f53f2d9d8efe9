package tui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestBinaryInTmuxConnection drives the built binary against a real kube-apiserver at 80x24 and 200x60: the
// apiserver is killed, and both headers say the data is stale and that they reconnect; once it is back, both
// say live again and follow the cluster; a kubeconfig with a refused token says unauthorized, with its user.
func TestBinaryInTmuxConnection(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not on PATH (%v): run `bash hack/ensure-tmux.sh` to install it", err)
	}
	bin := buildBinary(t)
	env := testenv.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	loadDemoInto(t, ctx, env.Client)

	small := startTmux(t, 80, 24, bin, "top", "--kubeconfig", env.Kubeconfig)
	large := startTmux(t, 200, 60, bin, "top", "--kubeconfig", env.Kubeconfig)
	both := []*tmux{small, large}
	for _, tm := range both {
		tm.waitFor("the live first frame", "● live", "19 GPU pods", "8 pending")
	}

	// The apiserver goes away for a while: the headers say stale and reconnecting, and mark the numbers.
	restarted := make(chan time.Duration, 1)
	go func() { restarted <- env.RestartAPIServer(t, 20*time.Second) }()
	for _, tm := range both {
		tm.waitFor("the stale header", "◐ stale since", "reconnecting", "STALE 11 nodes")
		if s := tm.screen(); strings.Contains(s, "● live") {
			t.Errorf("a stale header still says live:\n%s", s)
		}
	}
	if s := large.screen(); !strings.Contains(s, "the API server does not answer; the numbers are as of") {
		t.Errorf("the 200-column header does not say why the data is stale:\n%s", s)
	}
	select {
	case d := <-restarted:
		t.Logf("kube-apiserver back after %s", d.Round(time.Second))
	case <-ctx.Done():
		t.Fatal("kube-apiserver did not come back")
	}

	// Back: live again, and the informers follow the cluster.
	for _, tm := range both {
		tm.waitUntil("the header live again", func(s string) bool {
			return strings.Contains(s, "● live") && !strings.Contains(s, "STALE") && !strings.Contains(s, "reconnecting")
		})
	}
	if _, err := env.Client.CoreV1().Pods("team-vision").Create(ctx, gpuPod("team-vision", "after-restart", "", "", 8000, 10), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tm := range both {
		// client-go's informers back off up to 30 s between tries while the API server is away.
		tm.waitForWithin("the pod created after the restart", 90*time.Second, "9 pending")
		tm.keys("q")
		tm.waitExit()
	}

	// A token the apiserver refuses: unauthorized, with the kubeconfig's user, and a hint about credentials.
	kc, err := os.ReadFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kc), env.Token) {
		t.Fatalf("the kubeconfig %s does not hold the token to spoil", env.Kubeconfig)
	}
	bad := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(bad, []byte(strings.ReplaceAll(string(kc), env.Token, "not-the-token")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		tm := startTmux(t, size[0], size[1], bin, "top", "--kubeconfig", bad)
		tm.waitFor("the refused credentials", "✗ unauthorized (user admin)", "refuses the credentials of user admin")
		if s := tm.screen(); strings.Contains(s, "the network") {
			t.Errorf("%dx%d: a refused token gets the network hint:\n%s", size[0], size[1], s)
		}
		tm.keys("q")
		tm.waitExit()
	}
}
