package engine

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
)

// kubeFixes proves the changes that clear kube-scheduler's own checks: tolerate a node's taint, uncordon a
// node, drop the pod's node selector and required affinity. Each is applied to a copy of the pod, or for a
// cordon to the node's object for the length of one evaluation, and evaluated like every other fix.
func (c *Cluster) kubeFixes(pod *corev1.Pod, v *Verdict, eval func(*corev1.Pod) *Verdict) []Fix {
	var out []Fix
	if hasReason(v, KubeTaint) {
		out = append(out, c.tolerationFixes(pod, v, eval)...)
	}
	if hasReason(v, KubeUnschedulable) {
		out = append(out, c.uncordonFixes(pod, v, eval)...)
	}
	if hasReason(v, KubeNodeAffinity) {
		if f := selectorFix(pod, eval); f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// kubeFixTries bounds the nodes a kube fix is tried for; kubeFixesShown the fixes of one kind printed.
const (
	kubeFixTries   = 8
	kubeFixesShown = 2
)

// pickFixes keeps the sufficient fixes (at most kubeFixesShown), or the first one when none is.
func pickFixes(all []Fix) []Fix {
	var out []Fix
	for _, f := range all {
		if f.Sufficient && len(out) < kubeFixesShown {
			out = append(out, f)
		}
	}
	if len(out) == 0 && len(all) > 0 {
		out = all[:1]
	}
	return out
}

func (c *Cluster) tolerationFixes(pod *corev1.Pod, v *Verdict, eval func(*corev1.Pod) *Verdict) []Fix {
	seen := map[string]bool{}
	var all []Fix
	for i := range v.Nodes() {
		ns := &v.Nodes()[i]
		if ns.Code != KubeTaint || len(all) >= kubeFixTries {
			continue
		}
		t, bad := kubefit.UntoleratedTaint(pod, c.kubeNode(ns.Node).Obj)
		if !bad || seen[t.ToString()] {
			continue
		}
		seen[t.ToString()] = true
		tol := corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect}
		if t.Value == "" {
			tol.Operator = corev1.TolerationOpExists
		}
		p := pod.DeepCopy()
		p.Spec.Tolerations = append(p.Spec.Tolerations, tol)
		all = append(all, *outcome(&Fix{What: fmt.Sprintf("tolerate taint %s (node %s)", t.ToString(), ns.Node),
			Field: "spec.tolerations", From: tolerationsText(pod.Spec.Tolerations), To: "+" + TolerationText(tol)}, eval(p)))
	}
	return pickFixes(all)
}

// TolerationText is a toleration as a fix writes it: key=value:Effect, key:Effect with Exists.
func TolerationText(t corev1.Toleration) string {
	s := t.Key
	if t.Operator != corev1.TolerationOpExists {
		s += "=" + t.Value
	}
	if t.Effect != "" {
		s += ":" + string(t.Effect)
	}
	return s
}

func tolerationsText(ts []corev1.Toleration) string {
	if len(ts) == 0 {
		return "(none)"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = TolerationText(t)
	}
	return strings.Join(parts, ", ")
}

func (c *Cluster) uncordonFixes(pod *corev1.Pod, v *Verdict, eval func(*corev1.Pod) *Verdict) []Fix {
	var all []Fix
	for i := range v.Nodes() {
		ns := &v.Nodes()[i]
		if ns.Code != KubeUnschedulable || len(all) >= kubeFixTries {
			continue
		}
		old := c.kube.nodes[ns.Node]
		if old == nil {
			continue
		}
		n := old.Obj.DeepCopy()
		n.Spec.Unschedulable = false
		var taints []corev1.Taint
		for _, t := range n.Spec.Taints {
			if t.Key != corev1.TaintNodeUnschedulable {
				taints = append(taints, t)
			}
		}
		n.Spec.Taints = taints
		c.kube.nodes[ns.Node] = kubefit.NewNode(n)
		after := eval(pod)
		c.kube.nodes[ns.Node] = old
		all = append(all, *outcome(&Fix{What: fmt.Sprintf("uncordon node %s (kubectl uncordon %s)", ns.Node, ns.Node),
			Object: "Node " + ns.Node, Field: "spec.unschedulable", From: "true", To: "false"}, after))
	}
	return pickFixes(all)
}

// selectorFix drops the pod's nodeSelector and required node affinity.
func selectorFix(pod *corev1.Pod, eval func(*corev1.Pod) *Verdict) *Fix {
	p := pod.DeepCopy()
	var fields, from []string
	if len(pod.Spec.NodeSelector) > 0 {
		keys := make([]string, 0, len(pod.Spec.NodeSelector))
		for k := range pod.Spec.NodeSelector {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, k+"="+pod.Spec.NodeSelector[k])
		}
		fields, from = append(fields, "spec.nodeSelector"), append(from, strings.Join(kv, ","))
		p.Spec.NodeSelector = nil
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		fields, from = append(fields, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"), append(from, "(set)")
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = nil
	}
	if len(fields) == 0 {
		return nil
	}
	return outcome(&Fix{What: "drop the pod's node selector", Field: strings.Join(fields, ", "), From: strings.Join(from, ", "), To: "(none)"}, eval(p))
}
