package kubefit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSummaryFromCheck(t *testing.T) {
	pod := mkPod("p", rl("cpu", "4", "nvidia.com/gpu", "1"), nodeSelector("pool", "gpu"))
	nodes := []*corev1.Node{
		mkNode("busy", stdAlloc(), withLabels("pool", "gpu")),
		mkNode("cpu-1", stdAlloc(), withLabels("pool", "cpu")),
		mkNode("cpu-2", stdAlloc()),
	}
	bound := map[string][]*corev1.Pod{"busy": {mkPod("x", rl("cpu", "6500m"), phase(corev1.PodRunning))}}
	got := Summary(Check(pod, nodes, bound, hamiResources))
	want := "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."
	if got != want {
		t.Errorf("Summary:\n got %q\nwant %q", got, want)
	}
}

func TestSummary(t *testing.T) {
	fail := func(reasons ...string) []Failure {
		var out []Failure
		for _, r := range reasons {
			out = append(out, Failure{Check: "X", Reason: r, Message: "m"})
		}
		return out
	}
	many := func(n int, r NodeResult) []NodeResult {
		out := make([]NodeResult, n)
		for i := range out {
			out[i] = r
		}
		return out
	}
	cases := []struct {
		name    string
		results []NodeResult
		want    string
	}{
		{name: "no nodes", results: nil, want: ""},
		{name: "every node passes", results: []NodeResult{{Node: "a"}, {Node: "b"}}, want: ""},
		{name: "mixed, passing nodes count only in the total",
			results: []NodeResult{
				{Node: "a", Failures: fail("node(s) had untolerated taint(s)")},
				{Node: "b", Failures: fail("Insufficient cpu", "Insufficient memory")},
				{Node: "c", Failures: fail("Insufficient cpu")},
				{Node: "d"},
			},
			want: "0/4 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint(s), 2 Insufficient cpu."},
		{name: "a reason counts once per node",
			results: []NodeResult{{Node: "a", Failures: fail("Insufficient cpu", "Insufficient cpu")}, {Node: "b", Failures: fail("Insufficient cpu")}},
			want:    "0/2 nodes are available: 2 Insufficient cpu."},
		{name: "sorted as strings, as kube-scheduler does",
			results: append(many(10, NodeResult{Node: "z", Failures: fail("node(s) were unschedulable")}),
				many(2, NodeResult{Node: "y", Failures: fail("Insufficient cpu")})...),
			want: "0/12 nodes are available: 10 node(s) were unschedulable, 2 Insufficient cpu."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Summary(tc.results); got != tc.want {
				t.Errorf("Summary:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
