package snapshot

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// sharing keeps a large snapshot's pods small: the strings that repeat from pod to pod (namespaces, node and
// scheduler names, images, annotation and label keys, owner kinds, condition words, port names) are held once,
// and so are equal resource lists (most pods of a workload ask for the same) and toleration lists. A decoded
// pod otherwise carries its own copy of each, about 1.5 KB of a genbig pod's 4.5 KB.
//
// Shared resource and toleration lists are read-only, like every object of a snapshot: code that changes a pod
// (what-if's edits, the engine's request defaults) changes a DeepCopy, which copies the maps and slices too.
type sharing struct {
	strs  map[string]string
	lists map[string]corev1.ResourceList
	tols  map[string][]corev1.Toleration
	// tolTexts are the toleration lists of hand-decoded pods (sharedPodTolerations), by their JSON text.
	tolTexts map[string][]corev1.Toleration
	key      strings.Builder
	names    []corev1.ResourceName
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

// compact shares what a pod repeats; other objects are few and kept as decoded, and so is a pod the hand
// decoder already shared (sharedPod).
func (sh *sharing) compact(obj any) any {
	switch sp := obj.(type) {
	case sharedPod:
		return sp.Pod
	case *podRecord:
		return sp
	case sharedPodTolerations:
		sp.Spec.Tolerations = sh.tolerationText(sp.text, sp.Spec.Tolerations)
		return sp.Pod
	case sharedRecordTolerations:
		if m := sp.rec.more; m != nil && m != nilPod {
			m.meta.tolerations = sh.tolerationText(sp.text, m.meta.tolerations)
		}
		return sp.rec
	}
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
		o.APIVersion, o.Kind = sh.str(o.APIVersion), sh.str(o.Kind) // not the name and uid: a Job's pod has its own
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
			for j := range c.Ports {
				pt := &c.Ports[j]
				pt.Name, pt.Protocol, pt.HostIP = sh.str(pt.Name), corev1.Protocol(sh.str(string(pt.Protocol))), sh.str(pt.HostIP)
			}
		}
	}
	sp.Overhead = sh.list(sp.Overhead)
	sp.Tolerations = sh.tolerations(sp.Tolerations)
	// Conditions differ by their times and messages, but their words repeat.
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		c.Type, c.Status = corev1.PodConditionType(sh.str(string(c.Type))), corev1.ConditionStatus(sh.str(string(c.Status)))
		c.Reason = sh.str(c.Reason)
	}
	return p
}

// tolerationText is the list held for a hand-decoded pod's toleration list, by its text (ts, the first time).
func (sh *sharing) tolerationText(text string, ts []corev1.Toleration) []corev1.Toleration {
	if v, ok := sh.tolTexts[text]; ok {
		return v
	}
	if len(sh.tolTexts) < maxShared {
		if sh.tolTexts == nil {
			sh.tolTexts = map[string][]corev1.Toleration{}
		}
		sh.tolTexts[text] = ts
	}
	return ts
}

// tolerations shares equal toleration lists: a workload's pods, and most pods of a cluster (the two that
// admission adds to every pod), carry the same.
func (sh *sharing) tolerations(ts []corev1.Toleration) []corev1.Toleration {
	if len(ts) == 0 || len(ts) > 16 {
		return ts
	}
	sh.key.Reset()
	field := func(s string) { // length first: no value can pass for two
		sh.key.WriteString(strconv.Itoa(len(s)))
		sh.key.WriteByte(':')
		sh.key.WriteString(s)
	}
	for _, t := range ts {
		field(t.Key)
		field(string(t.Operator))
		field(t.Value)
		field(string(t.Effect))
		if t.TolerationSeconds != nil {
			field(strconv.FormatInt(*t.TolerationSeconds, 10))
		} else {
			sh.key.WriteByte('-')
		}
	}
	key := sh.key.String()
	if v, ok := sh.tols[key]; ok {
		return v
	}
	if sh.tols == nil {
		sh.tols = map[string][]corev1.Toleration{}
	}
	ts = slices.Clip(ts) // an append to a pod's list then copies it, instead of writing past it in another's
	if len(sh.tols) < maxShared {
		sh.tols[key] = ts
	}
	return ts
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
