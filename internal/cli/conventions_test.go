package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubectlConventions pins the exact output of -n, -A, --no-headers and -o name on the read commands.
func TestKubectlConventions(t *testing.T) {
	cases := []struct {
		golden string
		args   []string
	}{
		// top -n limits pending pods and quotas to the namespace; nodes and queues stay whole.
		{"top-namespace.txt", []string{"top", "--demo", "-n", "inference"}},
		// -A wins over -n, as in kubectl: the same as no -n.
		{"top.txt", []string{"top", "--demo", "-n", "inference", "-A"}},
		{"top-no-headers.txt", []string{"top", "--demo", "-n", "team-vision", "--no-headers"}},
		{"top-name.txt", []string{"top", "--demo", "-o", "name"}},
		{"top-name-namespace.txt", []string{"top", "--demo", "-o", "name", "-n", "ml-research"}},
		{"lint-name.txt", []string{"lint", "--demo", "-o", "name"}},
		{"lint-namespace.txt", []string{"lint", "--demo", "-n", "inference"}},
		// why-pending -A finds the pod's namespace.
		{"why-pending-quota.txt", []string{"why-pending", "llm-serve-2", "-A", "--demo"}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, err := run(t, tc.args...)
			if err != nil && tc.args[0] != "lint" {
				t.Fatalf("%v: %v\n%s", tc.args, err, errOut)
			}
			checkGolden(t, tc.golden, tc.args, out)
		})
	}
}

// TestTopNamespaceJSON: top -n NS -o json says which namespace and lists only its pending pods and quotas.
func TestTopNamespaceJSON(t *testing.T) {
	out, _, err := run(t, "top", "--demo", "-n", "inference", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"namespace: inference\n", "name: llm-serve-2", "name: reranker-0"} {
		if !strings.Contains(out, want) {
			t.Errorf("top -n inference -o yaml lacks %q", want)
		}
	}
	for _, other := range []string{"numa-allreduce", "namespace: ml-research", "namespace: team-vision"} {
		if strings.Contains(out, other) {
			t.Errorf("top -n inference -o yaml shows %q of another namespace", other)
		}
	}
}

// TestFlagNamesResolved: --node, -n and --queue take what the cluster has; a miss names the closest, and a
// unique prefix or another case resolves.
func TestFlagNamesResolved(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // the error, or "" for success
	}{
		{[]string{"why-pending", "numa-allreduce", "--demo", "--node", "gpu-a100-1"}, `--node "gpu-a100-1": no node gpu-a100-1 in file demo-cluster.yaml (embedded); did you mean "gpu-a100-01", "gpu-a100-02" or "gpu-h100-01"?`},
		{[]string{"why-pending", "numa-allreduce", "--demo", "--node", "nope"}, `--node "nope": no node nope in file demo-cluster.yaml (embedded)`},
		{[]string{"why-pending", "numa-allreduce", "--demo", "--node", "GPU-H100-01"}, ""},
		{[]string{"why-pending", "numa-allreduce", "--demo", "--node", "gpu-t4-01", "--node", "gpu-h100-m"}, ""},
		{[]string{"what-if", "--demo", "--node", "gpu-l4"}, ""},
		{[]string{"what-if", "--demo", "--queue", "serveing"}, `--queue "serveing": queue serveing does not exist in file demo-cluster.yaml (embedded); did you mean "serving"?`},
		{[]string{"why-pending", "-A", "rerank", "--demo"}, `pod rerank not found in any namespace of file demo-cluster.yaml (embedded); did you mean "inference/reranker-0"?`},
	} {
		_, _, err := run(t, c.args...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want it to contain %q", c.args, err, c.want)
		}
	}
	// A snapshot has no Namespace objects: a namespace without pods near one with pods is warned about, not
	// refused (team-a may exist, empty, beside team-b); one far from every namespace gets no warning.
	for _, c := range []struct {
		args []string
		warn string
	}{
		{[]string{"top", "--demo", "-n", "infrence"}, `warning: -n "infrence": namespace infrence has no pods or ResourceQuotas in file demo-cluster.yaml (embedded); did you mean "inference"?`},
		{[]string{"lint", "--demo", "-n", "ml-reserch"}, `did you mean "ml-research"?`},
		{[]string{"what-if", "--demo", "-n", "team-vison"}, `did you mean "team-vision"?`},
		{[]string{"what-if", "--demo", "-n", "brand-new-team"}, ""},
		{[]string{"what-if", "--demo", "-n", "inference"}, ""},
	} {
		_, errOut, err := run(t, c.args...)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
		}
		if got := strings.Contains(errOut, "did you mean"); got != (c.warn != "") || !strings.Contains(errOut, c.warn) {
			t.Errorf("%v: stderr %q, want %q", c.args, errOut, c.warn)
		}
	}
	// --node GPU-H100-01 is resolved before it is used: the wide table shows that node's GPUs.
	out, _, err := run(t, "why-pending", "numa-allreduce", "--demo", "--node", "GPU-H100-01")
	if err != nil || !strings.Contains(out, "gpu-h100-01") {
		t.Errorf("--node GPU-H100-01: %v\n%s", err, out)
	}
}

// TestWhyPendingAllNamespacesAmbiguous: -A with a name used in two namespaces lists both and asks for -n.
func TestWhyPendingAllNamespacesAmbiguous(t *testing.T) {
	world := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: train, namespace: team-a}
  spec: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: 1}}}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: train, namespace: team-b}
  spec: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: 1}}}]}
`
	path := filepath.Join(t.TempDir(), "world.yaml")
	if err := os.WriteFile(path, []byte(world), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "why-pending", "train", "-A", "--snapshot", path)
	want := "pod train is in 2 namespaces (team-a/train, team-b/train): name one with -n"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if _, _, err := run(t, "why-pending", "train", "-n", "team-b", "--snapshot", path); err != nil {
		t.Fatalf("-n team-b: %v", err)
	}
}

// TestReadmeTopSample: the README's `top --once -n inference` sample is the command's real output (the golden).
func TestReadmeTopSample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "top-namespace.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "$ kubectl hami top --demo --once -n inference\n"+string(golden)+"```") {
		t.Errorf("README.md's top --once -n inference sample differs from testdata/top-namespace.txt: paste it again")
	}
}
