package preempt

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

func TestExplain(t *testing.T) {
	terminating := func(p *corev1.Pod) *corev1.Pod {
		now := metav1.NewTime(t0)
		p.DeletionTimestamp = &now
		return p
	}
	nominated := func(p *corev1.Pod, node string) *corev1.Pod { p.Status.NominatedNodeName = node; return p }
	cases := []struct {
		name  string
		pods  []*corev1.Pod
		pod   *corev1.Pod
		lines []string // each line must contain its text
		none  string   // part of NoPreemption
	}{
		{name: "a preemption, proven",
			pods: []*corev1.Pod{running("lo", "a", "n1", 0, 40000, 0, 1), running("lo", "b", "n1", 0, 40000, 10, 2), running("lo", "c", "n2", 0, 80000, 50, 1)},
			pod:  pending("p", 100, 60000),
			lines: []string{"preempting pod lo/b (priority 10) and pod lo/a (priority 0) on node n1 would make it fit (priority 100; " +
				"kube-scheduler's choice of victims and node among 2 node(s) where preemption works, proven by the engine's gates)"}},
		{name: "equal pods share their priority",
			pods:  []*corev1.Pod{running("lo", "a", "n1", 0, 40000, 0, 1), running("lo", "b", "n1", 0, 40000, 0, 2), running("lo", "c", "n2", 0, 80000, 100, 1)},
			pod:   pending("p", 100, 60000),
			lines: []string{"preempting pod lo/a and pod lo/b (priority 0) on node n1"}},
		{name: "nothing to preempt",
			pods: []*corev1.Pod{running("lo", "a", "n1", 0, 80000, 100, 1), running("lo", "c", "n2", 0, 80000, 100, 1)},
			pod:  pending("p", 100, 60000), none: "no node runs a pod of priority below 100"},
		{name: "a nominated pod waits for its victims",
			pods:  []*corev1.Pod{terminating(running("lo", "a", "n1", 0, 80000, 0, 1)), running("lo", "c", "n2", 0, 80000, 0, 1)},
			pod:   nominated(pending("p", 100, 60000), "n1"),
			lines: []string{"it is nominated to node n1 (status.nominatedNodeName) and waits for pod lo/a (priority 0) to terminate there"},
			none:  "waits for pod lo/a"},
		{name: "a nominated pod with nothing terminating",
			pods:  []*corev1.Pod{running("lo", "a", "n1", 0, 80000, 100, 1), running("lo", "c", "n2", 0, 80000, 100, 1)},
			pod:   nominated(pending("p", 100, 60000), "n1"),
			lines: []string{"where no pod of lower priority is terminating"}, none: "no node runs a pod of priority below 100"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := world([]*corev1.Node{gpuNode("n1", 1, 81920), gpuNode("n2", 1, 81920)}, tc.pods)
			v := c.Evaluate(tc.pod, engine.EvalOptions{})
			before := v.Summary
			a := Explain(c, NewIndex(tc.pods, nil, nil), tc.pod, v, Options{})
			if a == nil {
				t.Fatal("no answer")
			}
			if after := c.Evaluate(tc.pod, engine.EvalOptions{}).Summary; after != before {
				t.Fatalf("Explain changed the cluster: %q -> %q", before, after)
			}
			lines := a.Lines()
			if len(lines) != len(tc.lines) {
				t.Fatalf("lines %q, want %d", lines, len(tc.lines))
			}
			for i, want := range tc.lines {
				if !strings.Contains(lines[i], want) {
					t.Errorf("line %q lacks %q", lines[i], want)
				}
			}
			if !strings.Contains(a.NoPreemption, tc.none) || tc.none == "" && a.NoPreemption != "" {
				t.Errorf("noPreemption %q, want it to contain %q", a.NoPreemption, tc.none)
			}
		})
	}
}

// A pod that fits and is not nominated has nothing to say.
func TestExplainNothingForAFittingPod(t *testing.T) {
	c := world([]*corev1.Node{gpuNode("n1", 1, 81920)}, nil)
	pod := pending("p", 100, 1000)
	if a := Explain(c, NewIndex(nil, nil, nil), pod, c.Evaluate(pod, engine.EvalOptions{}), Options{}); a != nil {
		t.Fatalf("answer %+v for a pod that fits", a)
	}
}
