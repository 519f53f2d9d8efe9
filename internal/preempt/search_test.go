package preempt

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func labelled(p *corev1.Pod, k, v string) *corev1.Pod {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
	return p
}

func pdb(ns, name, app string, allowed int32) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:   policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}
}

func TestSearch(t *testing.T) {
	never := corev1.PreemptNever
	cases := []struct {
		name    string
		nodes   []*corev1.Node
		pods    []*corev1.Pod
		classes []*schedulingv1.PriorityClass
		pdbs    []*policyv1.PodDisruptionBudget
		pod     *corev1.Pod
		node    string   // the chosen node; "" for none
		victims []string // the chosen victims, most important first
		reason  string   // part of the reason when none
	}{
		{name: "the less important of two equal pods goes: the later start",
			nodes: []*corev1.Node{gpuNode("n1", 1, 81920)},
			pods:  []*corev1.Pod{running("lo", "a", "n1", 0, 40000, 0, 1), running("lo", "b", "n1", 0, 40000, 0, 2)},
			pod:   pending("p", 100, 30000), node: "n1", victims: []string{"lo/b"}},
		{name: "both go when one is not enough",
			nodes: []*corev1.Node{gpuNode("n1", 1, 81920)},
			pods:  []*corev1.Pod{running("lo", "a", "n1", 0, 40000, 0, 1), running("lo", "b", "n1", 0, 40000, 0, 2)},
			pod:   pending("p", 100, 60000), node: "n1", victims: []string{"lo/a", "lo/b"}},
		{name: "a pod on another GPU is reprieved, though more important by start",
			nodes: []*corev1.Node{gpuNode("n1", 2, 81920)},
			pods:  []*corev1.Pod{running("lo", "a", "n1", 0, 80000, 0, 1), running("lo", "b", "n1", 1, 10000, 0, 2)},
			pod:   pending("p", 100, 75000), node: "n1", victims: []string{"lo/b"}},
		{name: "the higher-priority pod is reprieved first",
			nodes: []*corev1.Node{gpuNode("n1", 2, 81920)},
			pods:  []*corev1.Pod{running("lo", "a", "n1", 0, 80000, 50, 5), running("lo", "b", "n1", 1, 80000, 10, 1)},
			pod:   pending("p", 100, 75000), node: "n1", victims: []string{"lo/b"}},
		{name: "the node whose highest victim is lowest",
			nodes: []*corev1.Node{gpuNode("n1", 1, 81920), gpuNode("n2", 1, 81920)},
			pods:  []*corev1.Pod{running("lo", "a", "n1", 0, 80000, 50, 1), running("lo", "b", "n2", 0, 80000, 10, 1)},
			pod:   pending("p", 100, 40000), node: "n2", victims: []string{"lo/b"}},
		{name: "fewest PDB violations before lowest priority",
			nodes: []*corev1.Node{gpuNode("n1", 1, 81920), gpuNode("n2", 1, 81920)},
			pods:  []*corev1.Pod{labelled(running("lo", "a", "n1", 0, 80000, 10, 1), "app", "infer"), running("lo", "b", "n2", 0, 80000, 50, 1)},
			pdbs:  []*policyv1.PodDisruptionBudget{pdb("lo", "infer", "infer", 0)},
			pod:   pending("p", 100, 40000), node: "n2", victims: []string{"lo/b"}},
		{name: "a budget with a disruption allowed protects nothing",
			nodes: []*corev1.Node{gpuNode("n1", 1, 81920), gpuNode("n2", 1, 81920)},
			pods:  []*corev1.Pod{labelled(running("lo", "a", "n1", 0, 80000, 10, 1), "app", "infer"), running("lo", "b", "n2", 0, 80000, 50, 1)},
			pdbs:  []*policyv1.PodDisruptionBudget{pdb("lo", "infer", "infer", 1)},
			pod:   pending("p", 100, 40000), node: "n1", victims: []string{"lo/a"}},
		{name: "a budget of another namespace protects nothing",
			nodes: []*corev1.Node{gpuNode("n1", 1, 81920), gpuNode("n2", 1, 81920)},
			pods:  []*corev1.Pod{labelled(running("lo", "a", "n1", 0, 80000, 10, 1), "app", "infer"), running("lo", "b", "n2", 0, 80000, 50, 1)},
			pdbs:  []*policyv1.PodDisruptionBudget{pdb("other", "infer", "infer", 0)},
			pod:   pending("p", 100, 40000), node: "n1", victims: []string{"lo/a"}},
		{name: "the smaller priority sum",
			nodes: []*corev1.Node{gpuNode("n1", 1, 81920), gpuNode("n2", 1, 81920)},
			pods: []*corev1.Pod{running("lo", "a1", "n1", 0, 40000, 10, 1), running("lo", "a2", "n1", 0, 40000, 10, 1),
				running("lo", "b", "n2", 0, 80000, 10, 1)},
			pod: pending("p", 100, 70000), node: "n2", victims: []string{"lo/b"}},
		{name: "the latest start among equal victims",
			nodes: []*corev1.Node{gpuNode("n1", 1, 81920), gpuNode("n2", 1, 81920)},
			pods:  []*corev1.Pod{running("lo", "a", "n1", 0, 80000, 10, 9), running("lo", "b", "n2", 0, 80000, 10, 1)},
			pod:   pending("p", 100, 40000), node: "n1", victims: []string{"lo/a"}},
		{name: "the name breaks the last tie",
			nodes: []*corev1.Node{gpuNode("n2", 1, 81920), gpuNode("n1", 1, 81920)},
			pods:  []*corev1.Pod{running("lo", "a", "n2", 0, 80000, 10, 1), running("lo", "b", "n1", 0, 80000, 10, 1)},
			pod:   pending("p", 100, 40000), node: "n1", victims: []string{"lo/b"}},
		{name: "equal priority evicts nothing",
			nodes:  []*corev1.Node{gpuNode("n1", 1, 81920)},
			pods:   []*corev1.Pod{running("lo", "a", "n1", 0, 80000, 100, 1)},
			pod:    pending("p", 100, 40000),
			reason: "no node runs a pod of priority below 100"},
		{name: "preemptionPolicy Never evicts nothing",
			nodes:  []*corev1.Node{gpuNode("n1", 1, 81920)},
			pods:   []*corev1.Pod{running("lo", "a", "n1", 0, 80000, 0, 1)},
			pod:    func() *corev1.Pod { p := pending("p", 100, 40000); p.Spec.PreemptionPolicy = &never; return p }(),
			reason: "preemptionPolicy is Never"},
		{name: "the class's preemptionPolicy Never",
			nodes:   []*corev1.Node{gpuNode("n1", 1, 81920)},
			pods:    []*corev1.Pod{running("lo", "a", "n1", 0, 80000, 0, 1)},
			classes: []*schedulingv1.PriorityClass{{ObjectMeta: metav1.ObjectMeta{Name: "batch-high"}, Value: 100, PreemptionPolicy: &never}},
			pod: func() *corev1.Pod {
				p := pending("p", 0, 40000)
				p.Spec.Priority = nil
				p.Spec.PriorityClassName = "batch-high"
				return p
			}(),
			reason: "preemptionPolicy is Never"},
		{name: "priority from the class when spec.priority is unset",
			nodes:   []*corev1.Node{gpuNode("n1", 1, 81920)},
			pods:    []*corev1.Pod{running("lo", "a", "n1", 0, 80000, 0, 1)},
			classes: []*schedulingv1.PriorityClass{{ObjectMeta: metav1.ObjectMeta{Name: "prod"}, Value: 1000}},
			pod: func() *corev1.Pod {
				p := pending("p", 0, 40000)
				p.Spec.Priority = nil
				p.Spec.PriorityClassName = "prod"
				return p
			}(),
			node: "n1", victims: []string{"lo/a"}},
		{name: "a mirror pod is never a victim",
			nodes: []*corev1.Node{gpuNode("n1", 1, 81920)},
			pods: []*corev1.Pod{func() *corev1.Pod {
				p := running("kube-system", "m", "n1", 0, 80000, 0, 1)
				p.Annotations[corev1.MirrorPodAnnotationKey] = "x"
				return p
			}()},
			pod:    pending("p", 100, 40000),
			reason: "no node runs a pod of priority below 100"},
		{name: "evicting helps on no node: the GPUs are too small",
			nodes:  []*corev1.Node{gpuNode("n1", 1, 15360)},
			pods:   []*corev1.Pod{running("lo", "a", "n1", 0, 15000, 0, 1)},
			pod:    pending("p", 100, 40000),
			reason: "would not make it fit on any node"},
		{name: "a nominated pod waits for its terminating victims",
			nodes: []*corev1.Node{gpuNode("n1", 1, 81920)},
			pods: []*corev1.Pod{func() *corev1.Pod {
				p := running("lo", "a", "n1", 0, 80000, 0, 1)
				now := metav1.NewTime(t0)
				p.DeletionTimestamp = &now
				return p
			}()},
			pod:    func() *corev1.Pod { p := pending("p", 100, 40000); p.Status.NominatedNodeName = "n1"; return p }(),
			reason: "nominated to node n1 and waits for pod lo/a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := world(tc.nodes, tc.pods)
			if v := c.Evaluate(tc.pod, engineOpts()); v.Fits {
				t.Fatalf("the pod fits without preemption: %s", v.Summary)
			}
			ix := NewIndex(tc.pods, tc.classes, tc.pdbs)
			res := Search(c, ix, tc.pod, Options{})
			if tc.node == "" {
				if res.Chosen != nil {
					t.Fatalf("chose %s evicting %v; want none", res.Chosen.Node, res.Chosen.Victims)
				}
				if !strings.Contains(res.Reason, tc.reason) {
					t.Fatalf("reason %q, want it to contain %q", res.Reason, tc.reason)
				}
				return
			}
			if res.Chosen == nil {
				t.Fatalf("no preemption: %s", res.Reason)
			}
			var got []string
			for _, v := range res.Chosen.Victims {
				got = append(got, v.Key())
			}
			if res.Chosen.Node != tc.node || strings.Join(got, ",") != strings.Join(tc.victims, ",") {
				t.Fatalf("chose %s evicting %v; want %s evicting %v", res.Chosen.Node, got, tc.node, tc.victims)
			}
		})
	}
}

// NodeVictims adds to the pods that go anyway (kube-scheduler's victims) the ones the GPU still needs gone.
func TestNodeVictims(t *testing.T) {
	pods := []*corev1.Pod{running("lo", "a", "n1", 0, 40000, 0, 1), running("lo", "b", "n1", 0, 40000, 0, 2), running("hi", "c", "n1", 0, 1000, 500, 1)}
	c := world([]*corev1.Node{gpuNode("n1", 1, 81920)}, pods)
	ix := NewIndex(pods, nil, nil)
	cases := []struct {
		fixed   []string
		pod     *corev1.Pod
		fits    bool
		victims string
	}{
		{fixed: []string{"lo/a", "lo/b"}, pod: pending("p", 100, 60000), fits: true},
		{fixed: []string{"lo/a"}, pod: pending("p", 100, 60000), fits: true, victims: "lo/b"},
		{fixed: nil, pod: pending("p", 100, 60000), fits: true, victims: "lo/a,lo/b"},
		{fixed: []string{"lo/a"}, pod: pending("p", 100, 81000), fits: false},
	}
	for _, tc := range cases {
		probe := c.NewProbe(tc.pod, engineOpts())
		cand, fits := ix.NodeVictims(probe, "n1", ix.Priority(tc.pod), tc.fixed)
		var got []string
		if cand != nil {
			for _, v := range cand.Victims {
				got = append(got, v.Key())
			}
		}
		if fits != tc.fits || strings.Join(got, ",") != tc.victims {
			t.Errorf("fixed %v, %s: fits %v, victims %v; want %v, %q", tc.fixed, tc.pod.Name, fits, got, tc.fits, tc.victims)
		}
	}
}
