package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestBinaryInTmux builds kubectl-hami and drives `kubectl-hami top` in a real terminal (tmux: send-keys,
// capture-pane): on the embedded demo, and live against a real kube-apiserver (internal/testenv) where a pod
// is added and the screen changes. tmux must be installed: the test fails (it does not skip) without it.
func TestBinaryInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not on PATH (%v): run `bash hack/ensure-tmux.sh` to install it", err)
	}
	bin := buildBinary(t)

	t.Run("not a terminal: tables", func(t *testing.T) {
		out, err := exec.Command(bin, "top", "--demo").Output()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "NODES\nNODE ") || !strings.Contains(string(out), "PENDING GPU PODS") {
			t.Errorf("top with stdout on a pipe did not print the tables:\n%s", out)
		}
	})

	t.Run("demo", func(t *testing.T) {
		tm := startTmux(t, 100, 30, bin, "top", "--demo")
		tm.waitFor("the first frame", "gpu-a100-01", "8 pending", "[1 Nodes]")
		tm.keys("/")
		tm.text("a100")
		tm.keys("Enter")
		tm.waitFor("the filter", "/a100 2 of 11")
		if s := tm.screen(); strings.Contains(s, "gpu-t4-01") {
			t.Errorf("filtered screen still shows gpu-t4-01:\n%s", s)
		}
		tm.keys("Down", "Enter")
		tm.waitFor("node detail", "gpu-a100-02 · 8 GPUs · 6 pods", "finetune-a", "notebook-alice")
		tm.keys("Escape", "Escape", "4", "Down", "Enter")
		tm.waitFor("why-pending", "Why pending: inference/llm-serve-2", "ResourceQuotaNotFit")
		tm.keys("Escape", "5", "Enter", "Tab", "C-u")
		tm.text("70000")
		tm.waitFor("the what-if answer", "lands on gpu-h100-01", "Copies: 6 fit now (gpu-h100-01: 6).")
		tm.keys("Escape")
		// Resize to 80x24: the frame follows.
		tm.resize(80, 24)
		tm.keys("1")
		tm.waitFor("the 80-column frame", "[1 Nodes]", "NODE / GPU")
		for i, l := range strings.Split(tm.screen(), "\n") {
			if w := len([]rune(strings.TrimRight(l, " "))); w > 80 {
				t.Errorf("line %d is %d wide at 80 columns: %q", i, w, l)
			}
		}
		tm.keys("q")
		tm.waitExit()
	})

	t.Run("live apiserver", func(t *testing.T) {
		env := testenv.Start(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		loadDemoInto(t, ctx, env.Client)
		env.InstallVolcanoCRDs(t)
		loadVolcanoInto(t, env)
		tm := startTmux(t, 120, 40, bin, "top", "--kubeconfig", env.Kubeconfig)
		tm.waitFor("the live first frame", "● live", "context "+testenv.ContextName, "19 GPU pods", "8 pending", "gpu-h100-01")

		// A new pending GPU pod appears in the counts and in the Pending view.
		if _, err := env.Client.CoreV1().Pods("team-vision").Create(ctx, gpuPod("team-vision", "tmux-waiter", "", "", 8000, 10), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tm.waitFor("the new pending pod in the header", "9 pending")
		tm.keys("4")
		tm.waitFor("the new pending pod in the list", "tmux-waiter")

		// A pod bound to gpu-t4-02 shows on its bars and in its detail.
		runner := gpuPod("team-vision", "tmux-runner", "gpu-t4-02", "GPU-gpu-t4-02-1", 4000, 25)
		if _, err := env.Client.CoreV1().Pods("team-vision").Create(ctx, runner, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tm.waitFor("the bound pod in the header", "20 GPU pods")
		tm.keys(":")
		tm.text("node gpu-t4-02")
		tm.keys("Enter")
		tm.waitFor("the bound pod in the node detail", "gpu-t4-02 · 4 GPUs · 1 pods", "tmux-runner", "4000 MiB")

		// Deleting it empties the node again (at once: no kubelet here would confirm a graceful deletion).
		now := int64(0)
		if err := env.Client.CoreV1().Pods("team-vision").Delete(ctx, "tmux-runner", metav1.DeleteOptions{GracePeriodSeconds: &now}); err != nil {
			t.Fatal(err)
		}
		tm.waitFor("the deleted pod gone", "gpu-t4-02 · 4 GPUs · 0 pods", "19 GPU pods")

		// Volcano's queues are watched too: raising serving's card quota moves reranker-0 past the card gate.
		tm.keys("6")
		tm.waitFor("the Queues view", "[6 Queues]", "serving", "waiting: job ml-research/train-llm")
		qi := env.Dynamic(t).Resource(snapshot.QueueGVR)
		serving, err := qi.Get(ctx, "serving", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setCardQuota(serving, `{"NVIDIA-A100-SXM4-80GB":1,"NVIDIA-H100-80GB-HBM3":3}`)
		if _, err := qi.Update(ctx, serving, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		tm.keys(":")
		tm.text("pending reranker")
		tm.keys("Enter")
		tm.waitFor("reranker-0 past the card quota", "/reranker 1 of", "ResourceQuotaNotFit")
		tm.keys("q")
		tm.waitExit()
	})
}

// buildBinary builds ./cmd/kubectl-hami into a temporary folder, without cgo: the UI needs none, and the
// cgo build links NVML for the node agent, which needs the driver's library on the machine.
func buildBinary(t *testing.T) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "kubectl-hami")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/kubectl-hami")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/kubectl-hami: %v\n%s", err, out)
	}
	return bin
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// tmux is one tmux server (its own socket) running one command in a session.
type tmux struct {
	t      *testing.T
	socket string
}

func startTmux(t *testing.T, width, height int, command ...string) *tmux {
	t.Helper()
	tm := &tmux{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	// The shell prints the exit status and keeps the pane, so the test can see how the command ended.
	script := fmt.Sprintf("%s; echo EXIT=$?; sleep 60", shellQuote(command))
	tm.run("-f", "/dev/null", "new-session", "-d", "-s", "top", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height),
		"-e", "LANG=C.UTF-8", "-e", "TERM=xterm-256color", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", tm.socket, "kill-server").Run() })
	return tm
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func (tm *tmux) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, Escape, Down, C-u, or single characters).
func (tm *tmux) keys(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		tm.run("send-keys", "-t", "top", k)
		if k == "Escape" {
			// A lone ESC followed at once by another byte reads as alt+that key, as in every terminal.
			time.Sleep(150 * time.Millisecond)
		}
	}
}

// text types literal text.
func (tm *tmux) text(s string) {
	tm.t.Helper()
	tm.run("send-keys", "-t", "top", "-l", s)
}

func (tm *tmux) resize(width, height int) {
	tm.t.Helper()
	tm.run("resize-window", "-t", "top", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height))
}

func (tm *tmux) screen() string {
	tm.t.Helper()
	return tm.run("capture-pane", "-p", "-t", "top")
}

// waitUntil polls the screen until ok holds for it.
func (tm *tmux) waitUntil(what string, ok func(screen string) bool) {
	tm.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := tm.screen()
		if ok(s) {
			return
		}
		if strings.Contains(s, "EXIT=") || time.Now().After(deadline) {
			tm.t.Fatalf("waiting for %s:\n%s", what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitFor polls the screen until it shows every wanted string.
func (tm *tmux) waitFor(what string, wanted ...string) {
	tm.t.Helper()
	tm.waitForWithin(what, 30*time.Second, wanted...)
}

// waitForWithin is waitFor with its own deadline.
func (tm *tmux) waitForWithin(what string, within time.Duration, wanted ...string) {
	tm.t.Helper()
	deadline := time.Now().Add(within)
	for {
		s := tm.screen()
		missing := ""
		for _, w := range wanted {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if strings.Contains(s, "EXIT=") || time.Now().After(deadline) {
			tm.t.Fatalf("waiting for %s: %q not on screen:\n%s", what, missing, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitExit waits for the command to end and checks it exited 0 and left the alternate screen.
func (tm *tmux) waitExit() {
	tm.t.Helper()
	tm.waitFor("the program to end", "EXIT=")
	if s := tm.screen(); !strings.Contains(s, "EXIT=0") {
		tm.t.Errorf("the program did not exit 0:\n%s", s)
	}
}

// loadDemoInto creates the demo cluster's namespaces, nodes (with status), device ConfigMap, pods and
// quotas (with status) in a real apiserver.
func loadDemoInto(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	t.Helper()
	s := demoSnapshot(t)
	clearMeta := func(m *metav1.ObjectMeta) {
		m.ResourceVersion, m.UID, m.CreationTimestamp, m.ManagedFields = "", "", metav1.Time{}, nil
	}
	nss := map[string]bool{}
	for _, p := range s.Pods.Slice() {
		nss[p.Namespace] = true
	}
	for _, q := range s.Quotas {
		nss[q.Namespace] = true
	}
	for _, c := range s.ConfigMaps {
		nss[c.Namespace] = true
	}
	for ns := range nss {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create namespace %s: %v", ns, err)
		}
	}
	for _, want := range s.Nodes {
		n := want.DeepCopy()
		clearMeta(&n.ObjectMeta)
		n.Status = corev1.NodeStatus{}
		created, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create node %s: %v", n.Name, err)
		}
		created.Status = *want.Status.DeepCopy()
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("node %s status: %v", n.Name, err)
		}
	}
	for _, want := range s.ConfigMaps {
		c := want.DeepCopy()
		clearMeta(&c.ObjectMeta)
		if _, err := cs.CoreV1().ConfigMaps(c.Namespace).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create configmap %s: %v", c.Name, err)
		}
	}
	for _, want := range s.Pods.Slice() {
		p := want.DeepCopy()
		clearMeta(&p.ObjectMeta)
		p.Status = corev1.PodStatus{}
		created, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod %s/%s: %v", p.Namespace, p.Name, err)
		}
		if want.Status.Phase != "" && want.Status.Phase != corev1.PodPending {
			created.Status.Phase = want.Status.Phase
			if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("pod %s/%s status: %v", p.Namespace, p.Name, err)
			}
		}
	}
	for _, want := range s.Quotas {
		q := want.DeepCopy()
		clearMeta(&q.ObjectMeta)
		q.Status = corev1.ResourceQuotaStatus{}
		created, err := cs.CoreV1().ResourceQuotas(q.Namespace).Create(ctx, q, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create resourcequota %s/%s: %v", q.Namespace, q.Name, err)
		}
		created.Status = *want.Status.DeepCopy()
		if _, err := cs.CoreV1().ResourceQuotas(q.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("resourcequota %s/%s status: %v", q.Namespace, q.Name, err)
		}
	}
}
