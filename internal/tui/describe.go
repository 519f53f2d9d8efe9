package tui

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// describeObjects is d: each object in kubectl describe's layout (name, labels, annotations, then what the
// kind has), the parts HAMi reads included; several are separated by a blank line.
func describeObjects(objs []runtime.Object) string {
	var parts []string
	for _, o := range objs {
		var b strings.Builder
		switch o := o.(type) {
		case *corev1.Pod:
			describePod(&b, o)
		case *corev1.Node:
			describeNode(&b, o)
		case *corev1.ResourceQuota:
			describeQuota(&b, o)
		case *unstructured.Unstructured:
			describeUnstructured(&b, o)
		default:
			fmt.Fprintf(&b, "%T cannot be described\n", o)
		}
		parts = append(parts, strings.TrimRight(b.String(), "\n"))
	}
	return strings.Join(parts, "\n\n")
}

func field(b *strings.Builder, name, value string) {
	if value == "" {
		value = "<none>"
	}
	fmt.Fprintf(b, "%-18s %s\n", name+":", value)
}

// mapField writes a map one key a line, sorted, as kubectl describe writes labels and annotations.
func mapField(b *strings.Builder, name string, m map[string]string) {
	if len(m) == 0 {
		field(b, name, "")
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		label := ""
		if i == 0 {
			label = name + ":"
		}
		fmt.Fprintf(b, "%-18s %s=%s\n", label, k, m[k])
	}
}

func resources(l corev1.ResourceList) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		q := l[corev1.ResourceName(k)]
		parts[i] = k + "=" + q.String()
	}
	return strings.Join(parts, ", ")
}

func describePod(b *strings.Builder, p *corev1.Pod) {
	field(b, "Name", p.Name)
	field(b, "Namespace", p.Namespace)
	field(b, "Node", p.Spec.NodeName)
	field(b, "Scheduler", p.Spec.SchedulerName)
	field(b, "Created", p.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z"))
	status := string(p.Status.Phase)
	if p.DeletionTimestamp != nil {
		status = "Terminating (since " + p.DeletionTimestamp.UTC().Format("2006-01-02T15:04:05Z") + ")"
	}
	field(b, "Status", status)
	mapField(b, "Labels", p.Labels)
	mapField(b, "Annotations", p.Annotations)
	fmt.Fprintln(b, "Containers:")
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		fmt.Fprintf(b, "  %s:\n", c.Name)
		fmt.Fprintf(b, "    %-16s %s\n", "Image:", c.Image)
		if len(c.Resources.Limits) > 0 {
			fmt.Fprintf(b, "    %-16s %s\n", "Limits:", resources(c.Resources.Limits))
		}
		if len(c.Resources.Requests) > 0 {
			fmt.Fprintf(b, "    %-16s %s\n", "Requests:", resources(c.Resources.Requests))
		}
	}
	if len(p.Status.Conditions) > 0 {
		fmt.Fprintln(b, "Conditions:")
		for _, c := range p.Status.Conditions {
			fmt.Fprintf(b, "  %-16s %-6s %s %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
	}
}

func describeNode(b *strings.Builder, n *corev1.Node) {
	field(b, "Name", n.Name)
	field(b, "Created", n.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z"))
	mapField(b, "Labels", n.Labels)
	mapField(b, "Annotations", n.Annotations)
	var taints []string
	for _, t := range n.Spec.Taints {
		taints = append(taints, t.ToString())
	}
	field(b, "Taints", strings.Join(taints, ", "))
	field(b, "Unschedulable", fmt.Sprint(n.Spec.Unschedulable))
	if len(n.Status.Conditions) > 0 {
		fmt.Fprintln(b, "Conditions:")
		for _, c := range n.Status.Conditions {
			fmt.Fprintf(b, "  %-16s %-6s %s %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	field(b, "Capacity", resources(n.Status.Capacity))
	field(b, "Allocatable", resources(n.Status.Allocatable))
}

func describeQuota(b *strings.Builder, q *corev1.ResourceQuota) {
	field(b, "Name", q.Name)
	field(b, "Namespace", q.Namespace)
	mapField(b, "Annotations", q.Annotations)
	fmt.Fprintf(b, "%-40s %-12s %s\n", "Resource", "Used", "Hard")
	fmt.Fprintf(b, "%-40s %-12s %s\n", "--------", "----", "----")
	keys := make([]string, 0, len(q.Spec.Hard))
	for k := range q.Spec.Hard {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	for _, k := range keys {
		hard, used := q.Spec.Hard[corev1.ResourceName(k)], q.Status.Used[corev1.ResourceName(k)]
		fmt.Fprintf(b, "%-40s %-12s %s\n", k, used.String(), hard.String())
	}
}

// describeUnstructured is a CRD object (a Volcano Queue): its metadata, then spec and status as YAML.
func describeUnstructured(b *strings.Builder, u *unstructured.Unstructured) {
	field(b, "Name", u.GetName())
	field(b, "Kind", u.GetKind())
	mapField(b, "Labels", u.GetLabels())
	mapField(b, "Annotations", u.GetAnnotations())
	for _, part := range []string{"spec", "status"} {
		if v, ok := u.Object[part]; ok {
			fmt.Fprintf(b, "%s:\n", strings.ToUpper(part[:1])+part[1:])
			y := objectsYAML([]runtime.Object{&unstructured.Unstructured{Object: map[string]any{part: v}}})
			for _, l := range strings.Split(y, "\n")[1:] {
				fmt.Fprintln(b, l)
			}
		}
	}
}
