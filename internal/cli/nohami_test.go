package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterWithoutHAMiSaysSo: on a cluster without nodes, or whose nodes register no device HAMi reads (no
// device plugin, or only a registration form the chosen HAMi version cannot read), every command says so on
// its first line instead of a bare header or "No problems found"; a cluster with HAMi gets no such line.
func TestClusterWithoutHAMiSaysSo(t *testing.T) {
	dir := t.TempDir()
	write := func(name, items string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: List\nitems:\n"+items), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pending := `- apiVersion: v1
  kind: Pod
  metadata: {name: p1, namespace: default}
  spec:
    containers:
    - {name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}
  status: {phase: Pending}
`
	node := func(annotations string) string {
		return `- apiVersion: v1
  kind: Node
  metadata: {name: n1` + annotations + `}
  status:
    allocatable: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "2"}
    capacity: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "2"}
`
	}
	empty := write("empty.yaml", pending)
	plain := write("plain.yaml", node("")+pending)
	old := write("old.yaml", node(`, annotations: {hami.io/node-nvidia-register: 'GPU-0,4,15360,100,NVIDIA-Tesla T4,0,true,0,hami-core:'}`)+pending)
	const noNodes = "The cluster has no nodes: nothing can be placed"
	const noHAMi = "No node registers devices HAMi schedules: is HAMi's device plugin or `kubectl hami agent` running? (1 node, none with a readable hami.io/node-*-register annotation"
	for _, tc := range []struct {
		file, want string
	}{
		{empty, noNodes},
		{plain, noHAMi + ")"},
		{old, noHAMi + "; 1 registered in a form HAMi v2.10 cannot read, see --hami-version)"},
	} {
		for _, args := range [][]string{{"lint"}, {"top"}, {"why-pending", "p1"}, {"what-if"}} {
			out, _, err := run(t, append(args, "--snapshot", tc.file)...)
			if err != nil {
				t.Errorf("%v on %s: %v", args, filepath.Base(tc.file), err)
				continue
			}
			if first := firstLine(out); !strings.HasPrefix(first, tc.want) {
				t.Errorf("%v on %s: first line %q, want %q", args, filepath.Base(tc.file), first, tc.want)
			}
		}
		for _, args := range [][]string{{"lint", "-o", "json"}, {"top", "-o", "json"}} {
			out, _, err := run(t, append(args, "--snapshot", tc.file)...)
			var got struct{ Notice string }
			if err != nil || json.Unmarshal([]byte(out), &got) != nil || !strings.HasPrefix(got.Notice, tc.want) {
				t.Errorf("%v on %s: notice %q (%v), want %q", args, filepath.Base(tc.file), got.Notice, err, tc.want)
			}
		}
	}
	for _, args := range [][]string{{"lint"}, {"top"}, {"what-if"}, {"top", "-o", "json"}} {
		out, _, _ := run(t, append(args, "--demo")...)
		if strings.Contains(out, "No node registers") || strings.Contains(out, `"notice"`) {
			t.Errorf("%v --demo says HAMi is absent:\n%s", args, out)
		}
	}
}
