package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// completionRoot is the command tree of newRoot with the completion command and completions registered.
func completionRoot(out *bytes.Buffer) *cobra.Command {
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: out}
	now := func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }
	root := &cobra.Command{Use: "kubectl-hami", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(out)
	root.SetErr(out)
	config := genericclioptions.NewConfigFlags(true)
	config.AddFlags(root.PersistentFlags())
	read := &readFlags{config: config}
	root.AddCommand(
		newVersionCommand(streams),
		newWhyPendingCommand(read, streams, now),
		newWhatIfCommand(read, streams, now),
		newTopCommand(read, streams, now),
		newSnapshotCommand(read, streams),
		newCompletionCommand(streams),
	)
	registerCompletions(root, read)
	return root
}

// complete runs cobra's __complete (what kubectl_complete-hami calls) and returns the offered values and the
// directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	var out bytes.Buffer
	root := completionRoot(&out)
	root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, args...))
	if err := root.Execute(); err != nil {
		t.Fatalf("__complete %v: %v", args, err)
	}
	var values []string
	directive := ""
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		switch {
		case strings.HasPrefix(line, ":"):
			directive = line
		case strings.HasPrefix(line, "Completion ended"):
		default:
			values = append(values, line)
		}
	}
	return values, directive
}

func names(values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i], _, _ = strings.Cut(v, "\t")
	}
	return out
}

func TestCompletePodNamesPendingFirst(t *testing.T) {
	values, directive := complete(t, "why-pending", "--demo", "-n", "inference", "")
	if len(values) == 0 {
		t.Fatal("no pod names offered")
	}
	if !strings.HasPrefix(values[0], "llm-serve-2\tPending") {
		t.Fatalf("first completion %q, want the pending llm-serve-2 first with its phase: %q", values[0], values)
	}
	seenRunning := false
	for _, v := range values {
		phase := v[strings.Index(v, "\t")+1:]
		if phase != "Pending" {
			seenRunning = true
		} else if seenRunning {
			t.Fatalf("pending pod %q after a non-pending one: %q", v, values)
		}
	}
	// 4 = ShellCompDirectiveNoFileComp, 32 = ShellCompDirectiveKeepOrder
	if directive != ":36" {
		t.Fatalf("directive %q, want :36 (no files, keep order)", directive)
	}

	values, _ = complete(t, "why-pending", "--demo", "-n", "inference", "llm-serve-")
	for _, n := range names(values) {
		if !strings.HasPrefix(n, "llm-serve-") {
			t.Fatalf("%q offered for prefix llm-serve-", n)
		}
	}
	if values, _ = complete(t, "why-pending", "--demo", "-n", "inference", "llm-serve-2", ""); len(values) != 0 {
		t.Fatalf("a second argument offered %q", values)
	}
}

func TestCompleteNamespacesAndNodes(t *testing.T) {
	values, directive := complete(t, "why-pending", "--demo", "-n", "")
	got := strings.Join(values, ",")
	for _, want := range []string{"inference", "ml-research"} {
		if !strings.Contains(","+got+",", ","+want+",") {
			t.Fatalf("namespaces %q lack %s", got, want)
		}
	}
	if directive != ":4" {
		t.Fatalf("directive %q, want :4 (no files)", directive)
	}
	values, _ = complete(t, "why-pending", "llm-serve-2", "--demo", "--node", "gpu-a100")
	if strings.Join(values, ",") != "gpu-a100-01,gpu-a100-02" {
		t.Fatalf("--node gpu-a100 offered %q", values)
	}
}

func TestCompleteSnapshotFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cluster.yaml")
	snap := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: train-7, namespace: ml}
  status: {phase: Pending}
- apiVersion: v1
  kind: Pod
  metadata: {name: train-8, namespace: ml}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: other, namespace: web}
  status: {phase: Running}
`
	if err := os.WriteFile(file, []byte(snap), 0o644); err != nil {
		t.Fatal(err)
	}
	values, _ := complete(t, "why-pending", "--snapshot", file, "-n", "ml", "")
	if got := strings.Join(values, ","); got != "train-7\tPending,train-8\tRunning" {
		t.Fatalf("pods of the snapshot: %q", got)
	}
	values, _ = complete(t, "top", "--snapshot", file, "-n", "")
	if got := strings.Join(values, ","); got != "ml,web" {
		t.Fatalf("namespaces of the snapshot: %q", got)
	}
}

func TestCompleteUnreachableClusterOffersNothing(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "config")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster: {server: "https://127.0.0.1:1"}
- name: other
  cluster: {server: "https://127.0.0.1:2"}
contexts:
- name: gone
  context: {cluster: gone, user: me, namespace: ml}
- name: other
  context: {cluster: other, user: me}
current-context: gone
users:
- name: me
  user: {token: x}
`
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	values, directive := complete(t, "why-pending", "--kubeconfig", kubeconfig, "")
	if len(values) != 0 || directive != ":4" {
		t.Fatalf("unreachable cluster: offered %q, directive %q", values, directive)
	}
	if d := time.Since(start); d > 2*completionTimeout {
		t.Fatalf("completion took %v on an unreachable cluster", d)
	}
	values, _ = complete(t, "top", "--kubeconfig", kubeconfig, "--context", "")
	if got := strings.Join(values, ","); got != "gone,other" {
		t.Fatalf("--context offered %q", got)
	}
}

func TestCompleteCommandsAndOutput(t *testing.T) {
	values, _ := complete(t, "")
	got := "," + strings.Join(names(values), ",") + ","
	for _, want := range []string{"completion", "snapshot", "top", "version", "what-if", "why-pending"} {
		if !strings.Contains(got, ","+want+",") {
			t.Fatalf("commands %q lack %s", got, want)
		}
	}
	values, _ = complete(t, "why-pending", "-o", "")
	if got := strings.Join(values, ","); got != "wide,json,yaml" {
		t.Fatalf("why-pending -o offered %q", got)
	}
	values, _ = complete(t, "snapshot", "-o", "")
	if got := strings.Join(values, ","); got != "yaml,json" {
		t.Fatalf("snapshot -o offered %q", got)
	}
	values, _ = complete(t, "completion", "")
	if got := strings.Join(values, ","); got != "bash,zsh,fish,powershell" {
		t.Fatalf("completion offered %q", got)
	}
}

func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash":       "__start_kubectl-hami",
		"zsh":        "#compdef kubectl-hami",
		"fish":       "complete -c kubectl-hami",
		"powershell": "Register-ArgumentCompleter",
	} {
		var out bytes.Buffer
		root := completionRoot(&out)
		root.SetArgs([]string{"completion", shell})
		if err := root.Execute(); err != nil {
			t.Fatalf("completion %s: %v", shell, err)
		}
		if !strings.Contains(out.String(), marker) {
			t.Errorf("completion %s lacks %q", shell, marker)
		}
	}
	var out bytes.Buffer
	root := completionRoot(&out)
	root.SetArgs([]string{"completion", "tcsh"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "tcsh") {
		t.Fatalf("completion tcsh: %v", err)
	}
}

// TestKubectlCompleteScript: the script kubectl runs for `kubectl hami <TAB>` hands every word to
// kubectl-hami's __complete.
func TestKubectlCompleteScript(t *testing.T) {
	b, err := os.ReadFile("../../hack/kubectl_complete-hami")
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat("../../hack/kubectl_complete-hami")
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&0o111 == 0 {
		t.Fatal("hack/kubectl_complete-hami is not executable")
	}
	if !strings.HasPrefix(string(b), "#!/bin/sh\n") || !strings.Contains(string(b), `exec kubectl-hami __complete "$@"`) {
		t.Fatalf("hack/kubectl_complete-hami does not exec kubectl-hami __complete:\n%s", b)
	}
}

// TestCompleteQueuesAndCards: what-if's --queue and --card complete with the names the command checks typed
// names against (names.go), from the same source.
func TestCompleteQueuesAndCards(t *testing.T) {
	values, directive := complete(t, "what-if", "--demo", "--queue", "")
	if strings.Join(values, ",") != "research,serving" || directive != ":4" {
		t.Fatalf("--queue offered %q (%s), want research,serving", values, directive)
	}
	values, _ = complete(t, "what-if", "--demo", "--card", "NVIDIA-A")
	if strings.Join(values, ",") != "NVIDIA-A100-SXM4-80GB" {
		t.Fatalf("--card NVIDIA-A offered %q", values)
	}
}

// TestCompletePodNamesAllNamespaces: with -A the POD argument completes from every namespace, each pod described
// with its namespace, pending first.
func TestCompletePodNamesAllNamespaces(t *testing.T) {
	values, _ := complete(t, "why-pending", "-A", "--demo", "")
	if len(values) < 10 || values[0] != "detector-xl\tteam-vision · Pending" || !strings.HasSuffix(values[7], "Pending") || !strings.HasSuffix(values[8], "Running") {
		t.Fatalf("-A offered %q, want every namespace's pods, the 8 pending first by name", values)
	}
	values, _ = complete(t, "why-pending", "-A", "--demo", "rer")
	if strings.Join(values, ",") != "reranker-0\tinference · Pending" {
		t.Fatalf("-A rer offered %q", values)
	}
}
