package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestKubectlPlugin builds the kubectl-hami binary and runs it the way users do, as a kubectl plugin
// (`kubectl hami ...`), against a real apiserver holding the demo cluster. kubectl must be installed: the
// test fails (it does not skip) without it.
func TestKubectlPlugin(t *testing.T) {
	t.Parallel()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is not on PATH (%v): run `bash hack/ensure-kubectl.sh` to install it", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	binDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Build while the control plane starts.
	built := make(chan error, 1)
	go func() {
		cmd := exec.CommandContext(ctx, goBin, "build", "-o", filepath.Join(binDir, "kubectl-hami"), "./cmd/kubectl-hami")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			err = errors.New(err.Error() + "\n" + string(out))
		}
		built <- err
	}()
	env := testenv.Start(t)
	loadDemo(t, env.Client)
	if err := <-built; err != nil {
		t.Fatalf("go build ./cmd/kubectl-hami: %v", err)
	}

	environ := pluginEnv(binDir, env.Kubeconfig)
	kubectlHami := func(t *testing.T, args ...string) (string, string, error) {
		t.Helper()
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"hami"}, args...)...)
		cmd.Env = environ
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}

	t.Run("kubectl hami top", func(t *testing.T) {
		out, errOut, err := kubectlHami(t, "top")
		if err != nil {
			t.Fatalf("kubectl hami top: %v\nstderr:\n%s", err, errOut)
		}
		if h := firstLine(out); !strings.HasPrefix(h, "Source: cluster "+env.APIServerURL+" ") {
			t.Errorf("header %q does not name the cluster %s", h, env.APIServerURL)
		}
		want, _, err := runB(t, "top", "--demo")
		if err != nil {
			t.Fatal(err)
		}
		if g, w := section(out, "NODES"), section(want, "NODES"); g == "" || g != w {
			t.Errorf("NODES table differs from the demo's:\n plugin:\n%s\n demo:\n%s", g, w)
		}
	})

	t.Run("kubectl hami why-pending -o json", func(t *testing.T) {
		out, errOut, err := kubectlHami(t, "why-pending", "llm-serve-2", "-n", "inference", "-o", "json")
		if err != nil {
			t.Fatalf("kubectl hami why-pending: %v\nstderr:\n%s", err, errOut)
		}
		var wp WhyPending
		if err := json.Unmarshal([]byte(out), &wp); err != nil {
			t.Fatalf("output does not parse into WhyPending: %v\n%s", err, out)
		}
		if wp.Pod != "inference/llm-serve-2" || wp.Verdict == nil || wp.Verdict.Fits {
			t.Fatalf("pod %q verdict %+v, want inference/llm-serve-2 not fitting", wp.Pod, wp.Verdict)
		}
		quota := 0
		for _, r := range wp.Verdict.Reasons {
			if string(r.Code) == "ResourceQuotaNotFit" {
				quota = r.Nodes
			}
		}
		if quota != 2 {
			t.Errorf("verdict reasons %+v, want ResourceQuotaNotFit on 2 nodes", wp.Verdict.Reasons)
		}
		if len(wp.Events) != 1 || wp.Events[0].Reason != "FailedScheduling" {
			t.Errorf("events %+v, want the FailedScheduling event", wp.Events)
		}
	})

	t.Run("kubectl hami errors exit 1", func(t *testing.T) {
		_, errOut, err := kubectlHami(t, "why-pending", "nosuchpod", "-n", "inference")
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("kubectl hami why-pending nosuchpod: %v, want exit status 1\nstderr:\n%s", err, errOut)
		}
		if !strings.Contains(errOut, "error: pod inference/nosuchpod not found in cluster "+env.APIServerURL) {
			t.Errorf("stderr does not say the pod is missing:\n%s", errOut)
		}
	})
}

// pluginEnv is the test's environment with binDir first on PATH and KUBECONFIG set.
func pluginEnv(binDir, kubeconfig string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "KUBECONFIG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig)
}

// moduleRoot is the nearest folder at or above the working directory (the package's, under go test)
// that holds go.mod.
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
