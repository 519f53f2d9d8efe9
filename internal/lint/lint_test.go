package lint

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

func TestLintUnreadable(t *testing.T) {
	bad := node("n", nil, map[string]string{"nvidia.com/gpu": "8"}, 0)
	bad.Annotations = map[string]string{"hami.io/node-nvidia-register": "[{"}
	testCheck(t, "input-unreadable", []lintCase{
		{"a node registration", snap(bad),
			nil, []want{{Warning, "Node n", "metadata.annotations[hami.io/node-nvidia-register]", "", "the node component"}}},
		{"a fractional quota", snap(rq("ns", "q", map[string]string{"limits.nvidia.com/gpumem": "1.5"})),
			nil, []want{{Warning, "ResourceQuota ns/q", "spec.hard[limits.nvidia.com/gpumem]", "not a whole number", "correct the value"}}},
		{"card annotations are reported by the card checks", snap(queue("q", "x"), podGroup("ns", "g", "q", "y"), pod("ns", "p", map[string]string{cAnn: "|"}, gpu1, "")), nil, nil},
	})
}

func TestRunSortsAndNamesChecks(t *testing.T) {
	s := snap(h200Node(), queue("broken", "x"), queue("team-a", `{"NVIDIA-H20":1}`),
		pod("ns", "p", map[string]string{qAnn: "nope", cAnn: h200}, gpu1, ""),
		rq("ns", "q", map[string]string{"requests.nvidia.com/gpumem": "1"}))
	c, _ := s.Cluster(engine.DefaultConfig())
	got := Run(s, c, engine.DefaultConfig())
	type row struct{ sev, obj, check string }
	var rows []row
	for _, f := range got {
		rows = append(rows, row{string(f.Severity), f.Object.String(), f.Check})
	}
	want := []row{
		{"error", "Pod ns/p", "queue-missing"},
		{"error", "Queue broken", "card-quota-unparsable"},
		{"warning", "Node h200-01", "card-slots-counted"},
		{"warning", "Queue team-a", "card-unknown"},
		{"warning", "ResourceQuota ns/q", "quota-key-ignored"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("Run:\n got %v\nwant %v\n%s", rows, want, dump(got))
	}
	if e, w, i := Count(got); e != 2 || w != 3 || i != 0 {
		t.Errorf("Count = %d, %d, %d", e, w, i)
	}
	again := Run(s, c, engine.DefaultConfig())
	if !reflect.DeepEqual(got, again) {
		t.Error("two runs differ")
	}
}

func TestRunCleanAndNil(t *testing.T) {
	if got := Run(nil, nil, engine.DefaultConfig()); got != nil {
		t.Errorf("Run(nil) = %v", got)
	}
	s := snap(node("n", map[string]string{"nvidia.com/gpu.product": h200, "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "1"},
		map[string]string{"nvidia.com/gpu": "8"}, 8), queue("q", `{"NVIDIA-H200":4}`),
		pod("ns", "p", map[string]string{qAnn: "q", cAnn: h200}, gpu1, ""),
		rq("ns", "q", map[string]string{"limits.nvidia.com/gpumem": "1000", "limits.nvidia.com/gpucores": "100"}))
	c, _ := s.Cluster(engine.DefaultConfig())
	if got := Run(s, c, engine.DefaultConfig()); len(got) != 0 {
		t.Errorf("a clean cluster has findings:\n%s", dump(got))
	}
}

// TestRunOddInput feeds objects with nothing set, nil entries and odd values: nothing may panic.
func TestRunOddInput(t *testing.T) {
	empty := &unstructured.Unstructured{Object: map[string]any{"kind": "Queue"}}
	pg := &unstructured.Unstructured{Object: map[string]any{"kind": "PodGroup", "spec": map[string]any{"minMember": "x"}}}
	s := &snapshot.Snapshot{
		Nodes: []*corev1.Node{{}, node("x", map[string]string{".product": "a", "/.product": "b", "a/b.product": "c", "a/b.count": "", "a/b.memory": ""},
			map[string]string{"a/gpu.shared": "1", "a/mig-": "1"}, 0)},
		Pods: snapshot.PodsOf(&corev1.Pod{}, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{cAnn: "|||", qAnn: " ", gAnn: "g"}}},
			pod("", "", map[string]string{cAnn: "a/mig--mixed|a/mps-", qAnn: "q"}, nil, "")),
		Quotas:    []*corev1.ResourceQuota{{}, rq("", "", map[string]string{"limits.": "1", "requests./": "1", "limits.nvidia.com/": "0", "nvidia.com": "1"})},
		Queues:    []*unstructured.Unstructured{empty, queue("q", `{"":1}`), queue("r", "null"), queue("s", `{"a":1e400}`)},
		PodGroups: []*unstructured.Unstructured{pg, podGroup("", "", "", `{"|":1}`)},
		Volcano:   true,
	}
	c, _ := s.Cluster(engine.DefaultConfig())
	fs := Run(s, c, engine.DefaultConfig())
	for _, f := range fs {
		if f.Check == "" || f.Message == "" || f.Fix == "" || f.Object.Kind == "" {
			t.Errorf("incomplete finding: %s", dump([]Finding{f}))
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "NVIDIA-H200", "NVIDIA-H200/mig-1g.18gb-mixed"}
	for in, want := range map[string]string{
		"NVIDIA-H2OO":                   "NVIDIA-H200",
		"nvidia-h200":                   "NVIDIA-H200",
		"NVIDIA H200":                   "NVIDIA-H200",
		"NVDIA-H200":                    "NVIDIA-H200",
		"NVIDIA-H20":                    "",
		"NVIDIA-H800":                   "",
		"NVIDIA-H200/mig-1g.18gb":       "NVIDIA-H200/mig-1g.18gb-mixed",
		"H100-80GB-HBM3":                "NVIDIA-H100-80GB-HBM3",
		"NVIDIA A100-SXM4-80GB":         "NVIDIA-A100-SXM4-80GB",
		"Ascend-910B":                   "",
		"NVIDIA-GeForce-RTX-4090":       "",
		"NVIDIA-H200/mig-3g.71gb-mixed": "",
	} {
		got, ok := closest(in, names)
		if got != want || ok != (want != "") {
			t.Errorf("closest(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := closest("x", nil); ok {
		t.Error("closest with no candidates")
	}
	if got, ok := closest("team-1", []string{"team-2", "team-a"}); ok {
		t.Errorf("closest(team-1) = %q: another number is another queue", got)
	}
	if got, _ := closest("servng", []string{"default", "serving"}); got != "serving" {
		t.Errorf("closest(servng) = %q", got)
	}
}
