package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/examples"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

func TestErrorsNameWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: n1}\n---\nkind: Pod\nmetadata:\n  name: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "deployment.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"missing pod gets suggestions", []string{"why-pending", "llm-serve", "-n", "inference", "--demo"},
			[]string{"pod inference/llm-serve not found", "did you mean", "inference/llm-serve-0"}},
		{"pod in another namespace", []string{"why-pending", "pretrain-2", "--demo"},
			[]string{"pod default/pretrain-2 not found", "ml-research/pretrain-2 (use -n)"}},
		{"missing namespace", []string{"why-pending", "x", "-n", "nope", "--demo"}, []string{"namespace nope has no pods"}},
		{"invalid snapshot names file and line", []string{"top", "--snapshot", bad}, []string{bad + ":9:"}},
		{"a manifest passed as a snapshot", []string{"top", "--snapshot", manifest}, []string{manifest, "none of its 1 object(s)", "what-if -f"}},
		{"missing snapshot file", []string{"top", "--snapshot", filepath.Join(dir, "none.yaml")}, []string{"none.yaml", "no such file"}},
		{"unknown output", []string{"top", "--demo", "-o", "xml"}, []string{`unknown output format "xml"`}},
		{"demo and snapshot together", []string{"top", "--demo", "--snapshot", bad}, []string{"--demo and --snapshot are exclusive"}},
		{"bad percentage", []string{"what-if", "--demo", "--gpumem-percentage", "150"}, []string{"--gpumem-percentage 150"}},
		{"gpumem as a quantity names the MiB", []string{"what-if", "--demo", "--gpumem", "16Gi"}, []string{`"16Gi"`, "--gpumem 16384"}},
		{"gpumem not a number", []string{"what-if", "--demo", "--gpumem", "lots"}, []string{`"lots"`, "whole number of MiB"}},
		{"namespace no namespace can have", []string{"what-if", "--demo", "-n", "q?"}, []string{`-n "q?": no namespace can be named "q?"`}},
		{"namespace in capitals names the real one", []string{"what-if", "--demo", "-n", "ML-research"}, []string{`did you mean "ml-research"?`}},
		{"lint refuses a namespace no namespace can have", []string{"lint", "--demo", "-n", "team_a"}, []string{`no namespace can be named "team_a"`}},
		{"device typo names the closest", []string{"what-if", "--demo", "--device", "hygn"}, []string{`--device: unknown device "hygn": did you mean "hygon"?`}},
		{"bad annotation", []string{"what-if", "--demo", "--annotation", "novalue"}, []string{`--annotation "novalue": want key=value`}},
		{"unreachable cluster names the server", []string{"top", "--kubeconfig", kubeconfig, "--request-timeout", "2s"},
			[]string{"cannot list nodes from the cluster at https://127.0.0.1:1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, tc.args...)
			if err == nil {
				t.Fatalf("%v: no error", tc.args)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestMalformedAnnotationsWarnAndTheRestIsEvaluated(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "s.yaml")
	data := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: broken
    annotations:
      hami.io/node-nvidia-register: "GPU-a,10,lots,100,NVIDIA-T4,0,true:"
  status: {allocatable: {nvidia.com/gpu: "10"}}
- apiVersion: v1
  kind: Node
  metadata:
    name: good
    annotations:
      hami.io/node-nvidia-register: '[{"id":"GPU-b","count":10,"devmem":16384,"devcore":100,"type":"NVIDIA-T4","health":true}]'
  status: {allocatable: {nvidia.com/gpu: "10"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: p, namespace: default}
  spec:
    containers:
    - name: c
      resources: {limits: {nvidia.com/gpu: "1", nvidia.com/gpumem: "1000"}}
`
	if err := os.WriteFile(snap, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "why-pending", "p", "--snapshot", snap, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "warning: Node broken: metadata.annotations[hami.io/node-nvidia-register]") || !strings.Contains(errOut, "devmem") {
		t.Errorf("warning %q does not name the node, key and field", errOut)
	}
	var wp WhyPending
	if err := json.Unmarshal([]byte(out), &wp); err != nil {
		t.Fatal(err)
	}
	if wp.APIVersion != APIVersion || wp.Kind != "WhyPending" || wp.Verdict == nil || !wp.Verdict.Fits || wp.Verdict.Placement.Node != "good" {
		t.Fatalf("JSON answer %+v: want the pod placed on the good node", wp)
	}
	if ns := wp.Verdict.NodeStatus("broken"); ns == nil || ns.Code != "NodeUnregistered" {
		t.Errorf("broken node status %+v", ns)
	}
}

func TestTopJSON(t *testing.T) {
	out, _, err := run(t, "top", "--demo", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var top Top // Queues included
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatal(err)
	}
	// default has GPU usage but no quota: it is listed too, unlimited.
	if top.Kind != "Top" || len(top.Nodes) != 11 || len(top.Pending) != 8 || len(top.Quotas) != 5 || len(top.Queues) != 2 {
		t.Fatalf("top JSON: %d nodes, %d pending, %d quotas", len(top.Nodes), len(top.Pending), len(top.Quotas))
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	// A snapshot written by the snapshot writer reads back to the same answers.
	s, err := snapshotFromDemo()
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"yaml", "json"} {
		path := filepath.Join(t.TempDir(), "snap."+format)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteList(f, format); err != nil {
			t.Fatal(err)
		}
		f.Close()
		fromFile, _, err := run(t, "top", "-o", "wide", "--snapshot", path)
		if err != nil {
			t.Fatal(err)
		}
		fromDemo, _, _ := run(t, "top", "-o", "wide", "--demo")
		// Only the demo has (simulated) live usage: leave that section out.
		if i := strings.Index(fromDemo, "LIVE GPU USAGE"); i >= 0 {
			j := strings.Index(fromDemo[i:], "\n\n")
			fromDemo = fromDemo[:i] + fromDemo[i+j+2:]
		}
		strip := func(s string) string { _, rest, _ := strings.Cut(s, "\n"); return rest } // drop the Source header line
		if strip(fromFile) != strip(fromDemo) {
			t.Errorf("%s round trip changed the answer:\n%s", format, diff(strip(fromDemo), strip(fromFile)))
		}
	}
}

func snapshotFromDemo() (*snapshot.Snapshot, error) {
	return snapshot.Parse(examples.DemoCluster, "demo")
}

// TestUnauthorizedNamesTheCredentials: an API server that refuses the kubeconfig's token gets an error about the
// credentials, not a bare "Unauthorized".
func TestUnauthorizedNamesTheCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Message: "Unauthorized", Reason: metav1.StatusReasonUnauthorized, Code: http.StatusUnauthorized})
	}))
	defer srv.Close()
	kc := writeKubeconfig(t, filepath.Join(t.TempDir(), "kubeconfig"), srv.URL, "expired", "")
	for _, args := range [][]string{{"top", "--once"}, {"lint"}, {"snapshot"}} {
		_, _, err := run(t, append(args, "--kubeconfig", kc)...)
		want := "the API server at " + srv.URL + " does not accept the kubeconfig's credentials: its token or certificate is wrong or has expired"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want %q", args, err, want)
		}
	}
}
