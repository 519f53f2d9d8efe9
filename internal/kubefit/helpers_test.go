package kubefit

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rl builds a ResourceList from name, quantity pairs.
func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// stdAlloc is a roomy node: 8 cpu, 32Gi memory, 100Gi ephemeral storage, 110 pods.
func stdAlloc() corev1.ResourceList {
	return rl("cpu", "8", "memory", "32Gi", "ephemeral-storage", "100Gi", "pods", "110")
}

func mkNode(name string, alloc corev1.ResourceList, mods ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	n.Status.Allocatable = alloc
	for _, m := range mods {
		m(n)
	}
	return n
}

func withLabels(kv ...string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		for i := 0; i+1 < len(kv); i += 2 {
			n.Labels[kv[i]] = kv[i+1]
		}
	}
}

func withTaint(key, value string, effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }

// mkPod is a pod with one container requesting req.
func mkPod(name string, req corev1.ResourceList, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	p.Spec.Containers = []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: req}}}
	for _, m := range mods {
		m(p)
	}
	return p
}

func phase(ph corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Phase = ph }
}

func tolerate(t corev1.Toleration) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Tolerations = append(p.Spec.Tolerations, t) }
}

func nodeSelector(kv ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

func requiredAffinity(req corev1.NodeSelectorRequirement, fields ...corev1.NodeSelectorRequirement) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		term := corev1.NodeSelectorTerm{MatchFields: fields}
		if req.Key != "" {
			term.MatchExpressions = []corev1.NodeSelectorRequirement{req}
		}
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}},
		}}
	}
}

func initContainer(req corev1.ResourceList, sidecar bool) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		c := corev1.Container{Name: "init", Resources: corev1.ResourceRequirements{Requests: req}}
		if sidecar {
			always := corev1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
}
