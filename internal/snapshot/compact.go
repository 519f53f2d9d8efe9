package snapshot

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// sharing keeps a large snapshot's pods small: the strings that repeat from pod to pod (namespaces, node and
// scheduler names, images, annotation and label keys) are held once, and so are equal resource lists (most
// pods of a workload ask for the same). A decoded pod otherwise carries its own copy of each, about 1.5 KB of
// a genbig pod's 4.5 KB.
//
// Shared resource lists are read-only, like every object of a snapshot: code that changes a pod (what-if's
// edits, the engine's request defaults) changes a DeepCopy, which copies the maps too.
type sharing struct {
	strs  map[string]string
	lists map[string]corev1.ResourceList
	key   strings.Builder
	names []corev1.ResourceName
}

// maxShared bounds the tables: a snapshot of unique values stops sharing instead of growing them.
const maxShared = 1 << 16

func (sh *sharing) str(s string) string {
	if s == "" {
		return s
	}
	if v, ok := sh.strs[s]; ok {
		return v
	}
	if sh.strs == nil {
		sh.strs = map[string]string{}
	}
	if len(sh.strs) < maxShared {
		sh.strs[s] = s
	}
	return s
}

func (sh *sharing) list(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 || len(l) > 16 {
		return l
	}
	sh.names = sh.names[:0]
	for name := range l {
		sh.names = append(sh.names, name)
	}
	slices.Sort(sh.names)
	sh.key.Reset()
	for _, name := range sh.names {
		q := l[name]
		sh.key.WriteString(string(name))
		sh.key.WriteByte('=')
		sh.key.WriteString(q.String())
		sh.key.WriteByte(';')
	}
	key := sh.key.String()
	if v, ok := sh.lists[key]; ok {
		return v
	}
	if sh.lists == nil {
		sh.lists = map[string]corev1.ResourceList{}
	}
	if len(sh.lists) < maxShared {
		sh.lists[key] = l
	}
	return l
}

// strMap shares a map's keys (and values, when asked) in place: assigning an equal string key replaces the
// map's copy of it.
func (sh *sharing) strMap(m map[string]string, values bool) map[string]string {
	for k, v := range m {
		if values {
			v = sh.str(v)
		}
		m[sh.str(k)] = v
	}
	return m
}

// compact shares what a pod repeats; other objects are few and kept as decoded.
func (sh *sharing) compact(obj any) any {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj
	}
	p.Namespace = sh.str(p.Namespace)
	p.GenerateName = sh.str(p.GenerateName)
	// Annotation values are mostly unique (a pod's device allocation), but for a few keys; label values repeat
	// by workload.
	p.Annotations = sh.strMap(p.Annotations, false)
	for _, k := range repeatingAnnotations {
		if v, ok := p.Annotations[k]; ok {
			p.Annotations[k] = sh.str(v)
		}
	}
	p.Labels = sh.strMap(p.Labels, true)
	for i := range p.OwnerReferences {
		o := &p.OwnerReferences[i]
		o.APIVersion, o.Kind = sh.str(o.APIVersion), sh.str(o.Kind)
	}
	sp := &p.Spec
	sp.NodeName, sp.SchedulerName, sp.ServiceAccountName = sh.str(sp.NodeName), sh.str(sp.SchedulerName), sh.str(sp.ServiceAccountName)
	sp.PriorityClassName, sp.RuntimeClassName = sh.str(sp.PriorityClassName), sh.strPtr(sp.RuntimeClassName)
	sp.NodeSelector = sh.strMap(sp.NodeSelector, true)
	for _, cs := range [][]corev1.Container{sp.InitContainers, sp.Containers} {
		for i := range cs {
			c := &cs[i]
			c.Name, c.Image = sh.str(c.Name), sh.str(c.Image)
			c.Resources.Limits = sh.list(c.Resources.Limits)
			c.Resources.Requests = sh.list(c.Resources.Requests)
		}
	}
	sp.Overhead = sh.list(sp.Overhead)
	return p
}

// repeatingAnnotations are the pod annotations whose values repeat from pod to pod: a node's name, a bind
// phase, a queue, a PodGroup, a card name.
var repeatingAnnotations = []string{codec.PodNodeAnnotation, codec.PodBindPhaseAnnotation, codec.QueueNameAnnotation,
	codec.GroupNameAnnotation, codec.CardNameAnnotation}

func (sh *sharing) strPtr(s *string) *string {
	if s == nil {
		return nil
	}
	v := sh.str(*s)
	return &v
}
