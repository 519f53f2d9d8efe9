package snapshot

import (
	"iter"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pods are a snapshot's pods. A pod read from a file is kept as a compact record (podRecord, packed: packedPod,
// about 190 bytes for a plain pod with its lists and unique strings, against 2.3 KB as a corev1.Pod: a snapshot
// holds every pod of the cluster for the life of the command); a pod read live, or put in a snapshot built in memory, is kept whole. A reader gets a
// *corev1.Pod built for it (All, At): it reads it and drops it, so that the pods are never all held whole at
// once, which would bring the memory back. Every pod is read-only, as every object of a snapshot: a pod built
// from a record shares its maps and slices with the record.
type Pods struct {
	whole []*corev1.Pod
	recs  [][]packedPod // in chunks: growing never copies what is held
	n     int           // records held
	// strs are the records' strings, refs and ctrs their annotation and container lists (packed.go).
	strs *strTable
	refs chunked[strRef]
	ctrs chunked[packedContainer]
}

// recChunk is how many records a chunk holds.
const recChunk = 1 << 10

// PodsOf are pods kept whole (a live read, a snapshot built in memory), in the order given.
func PodsOf(pods ...*corev1.Pod) Pods { return Pods{whole: pods} }

// Len is how many pods there are.
func (ps *Pods) Len() int { return len(ps.whole) + ps.n }

// Add keeps a pod whole, after the others (after records, as a record: whole pods come first).
func (ps *Pods) Add(p *corev1.Pod) {
	if ps.n > 0 {
		ps.addRecord(compactPod(p))
		return
	}
	ps.whole = append(ps.whole, p)
}

func (ps *Pods) addRecord(r podRecord) {
	if ps.n%recChunk == 0 {
		ps.recs = append(ps.recs, make([]packedPod, 0, recChunk))
	}
	last := &ps.recs[len(ps.recs)-1]
	*last = append(*last, ps.pack(&r))
	ps.n++
}

func (ps *Pods) record(i int) *packedPod { return &ps.recs[i/recChunk][i%recChunk] }

// At is the i-th pod, whole.
func (ps *Pods) At(i int) *corev1.Pod {
	if i < len(ps.whole) {
		return ps.whole[i]
	}
	var b podBuilder
	return b.buildPacked(ps, ps.record(i-len(ps.whole)))
}

// All yields every pod whole, one at a time, in order (nil ones included, as kept).
func (ps *Pods) All() iter.Seq[*corev1.Pod] {
	return func(yield func(*corev1.Pod) bool) {
		for i := range ps.Len() {
			if !yield(ps.At(i)) {
				return
			}
		}
	}
}

// Slice is every pod whole at once: for a snapshot that is small or kept whole anyway (the terminal UI's world,
// tests), never for a read command's large file.
func (ps *Pods) Slice() []*corev1.Pod {
	if ps.n == 0 {
		return ps.whole
	}
	out := make([]*corev1.Pod, 0, ps.Len())
	for p := range ps.All() {
		out = append(out, p)
	}
	return out
}

// Meta is the i-th pod's namespace, name and node (spec.nodeName), read without building the pod; a nil pod
// has none.
func (ps *Pods) Meta(i int) (namespace, name, node string) {
	if i < len(ps.whole) {
		if p := ps.whole[i]; p != nil {
			return p.Namespace, p.Name, p.Spec.NodeName
		}
		return "", "", ""
	}
	r := ps.record(i - len(ps.whole))
	return ps.str(r.namespace), r.name, ps.str(r.nodeName)
}

// Names yields every pod's namespace and name, read without building the pods (nil pods left out).
func (ps *Pods) Names() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, p := range ps.whole {
			if p != nil && !yield(p.Namespace, p.Name) {
				return
			}
		}
		for _, chunk := range ps.recs {
			for i := range chunk {
				if r := &chunk[i]; r.more != nilPod && !yield(ps.str(r.namespace), r.name) {
					return
				}
			}
		}
	}
}

// phase is the i-th pod's status.phase, read without building the pod.
func (ps *Pods) phase(i int) corev1.PodPhase {
	if i < len(ps.whole) {
		if p := ps.whole[i]; p != nil {
			return p.Status.Phase
		}
		return ""
	}
	return corev1.PodPhase(ps.str(ps.record(i - len(ps.whole)).phase))
}

// annotation is the i-th pod's annotation key, read without building the pod.
func (ps *Pods) annotation(i int, key string) string {
	if i < len(ps.whole) {
		if p := ps.whole[i]; p != nil {
			return p.Annotations[key]
		}
		return ""
	}
	r := ps.record(i - len(ps.whole))
	annos := ps.refs.get(r.annotations)
	for j := 0; j < len(annos); j += 2 {
		if ps.str(annos[j]) == key {
			return ps.str(annos[j+1])
		}
	}
	return ""
}

// Find is the first pod namespace/name, whole, or nil.
func (ps *Pods) Find(namespace, name string) *corev1.Pod {
	for i := range ps.Len() {
		if ns, n, _ := ps.Meta(i); n == name && ns == namespace {
			return ps.At(i)
		}
	}
	return nil
}

// podRecord is a pod read from a file as the decoder makes it, and as the snapshot keeps it once packed
// (packedPod, packed.go): what every pod has in flat fields, its strings shared (sharing); what the API server adds to a workload's pod (labels, owners, priority, tolerations,
// conditions, ...) in more.meta; and what is rarer (affinity, spread constraints, init
// containers, ...) in more.rest, a corev1.Pod holding only those fields, nil for most pods. pod() builds the
// corev1.Pod it was made from.
type podRecord struct {
	name, namespace         string
	nodeName, schedulerName string
	phase                   corev1.PodPhase
	// annotations are key, value, key, value...: nil for no map, empty for an empty one.
	annotations []string
	containers  []containerRecord
	more        *podMore // nil for a plain pod
	typed       bool     // kind Pod, apiVersion v1: rest holds any other
}

// podMore is what a pod has beyond podRecord's flat fields (one pointer, so that a plain pod's record stays in
// a 144-byte size class).
type podMore struct {
	meta podMeta     // zero for a pod without
	rest *corev1.Pod // nil for most pods
}

// podMeta are the fields a pod that a controller made and the API server admitted has, beside podRecord's:
// about 250 bytes against a corev1.Pod's 1,280.
type podMeta struct {
	creation           metav1.Time
	generateName, uid  string
	resourceVersion    string
	labels             map[string]string
	owners             []metav1.OwnerReference
	priority           *int32
	preemptionPolicy   *corev1.PreemptionPolicy
	restartPolicy      corev1.RestartPolicy
	serviceAccountName string
	securityContext    *corev1.PodSecurityContext
	tolerations        []corev1.Toleration
	conditions         []corev1.PodCondition
	podIP              string
	startTime          *metav1.Time
}

// takeMeta moves podMeta's fields out of q (which then lacks them) into m.
func takeMeta(q *corev1.Pod, m *podMeta) {
	m.creation, q.CreationTimestamp = q.CreationTimestamp, metav1.Time{}
	m.generateName, m.uid, m.resourceVersion = q.GenerateName, string(q.UID), q.ResourceVersion
	q.GenerateName, q.UID, q.ResourceVersion = "", "", ""
	m.labels, m.owners, q.Labels, q.OwnerReferences = q.Labels, q.OwnerReferences, nil, nil
	sp := &q.Spec
	m.priority, m.preemptionPolicy, sp.Priority, sp.PreemptionPolicy = sp.Priority, sp.PreemptionPolicy, nil, nil
	m.restartPolicy, m.serviceAccountName, sp.RestartPolicy, sp.ServiceAccountName = sp.RestartPolicy, sp.ServiceAccountName, "", ""
	m.securityContext, m.tolerations, sp.SecurityContext, sp.Tolerations = sp.SecurityContext, sp.Tolerations, nil, nil
	st := &q.Status
	m.conditions, m.podIP, m.startTime, st.Conditions, st.PodIP, st.StartTime = st.Conditions, st.PodIP, st.StartTime, nil, "", nil
}

// putMeta is takeMeta undone: m's fields back into p.
func putMeta(p *corev1.Pod, m *podMeta) {
	p.CreationTimestamp, p.GenerateName, p.UID, p.ResourceVersion = m.creation, m.generateName, types.UID(m.uid), m.resourceVersion
	p.Labels, p.OwnerReferences = m.labels, m.owners
	sp := &p.Spec
	sp.Priority, sp.PreemptionPolicy, sp.RestartPolicy, sp.ServiceAccountName = m.priority, m.preemptionPolicy, m.restartPolicy, m.serviceAccountName
	sp.SecurityContext, sp.Tolerations = m.securityContext, m.tolerations
	p.Status.Conditions, p.Status.PodIP, p.Status.StartTime = m.conditions, m.podIP, m.startTime
}

// containerRecord is a container as podRecord keeps it: its name, image and resources flat; its ports, and in
// rest what is rarer (a security context, a restart policy, ...), in more, nil for a plain container.
type containerRecord struct {
	name, image      string
	limits, requests corev1.ResourceList
	more             *containerMore
}

type containerMore struct {
	ports []corev1.ContainerPort
	rest  *corev1.Container // nil for most containers
}

// compactPod makes the record of a (trimmed) pod; the pod is not changed, and the record shares its strings,
// maps and slices.
func compactPod(p *corev1.Pod) podRecord {
	if p == nil {
		return podRecord{more: nilPod}
	}
	var annos []string
	if p.Annotations != nil {
		annos = make([]string, 0, 2*len(p.Annotations))
		for k, v := range p.Annotations {
			annos = append(annos, k, v)
		}
	}
	return compactWith(p, annos, nil)
}

// compactWith is compactPod with the pod's annotations given as the record keeps them (key, value, ...; nil
// for no map), p.Annotations ignored: the hand decoder reads them straight into that list. p may be reused
// once it returns: the record keeps none of p's own memory (its container list included), only what p's
// fields point to. With a decoding goroutine's cache, the container records are carved from its slab.
func compactWith(p *corev1.Pod, annos []string, st *listCache) podRecord {
	r := podRecord{name: p.Name, namespace: p.Namespace, nodeName: p.Spec.NodeName, schedulerName: p.Spec.SchedulerName,
		phase: p.Status.Phase, annotations: annos}
	q := *p
	q.Name, q.Namespace, q.Spec.NodeName, q.Spec.SchedulerName, q.Status.Phase = "", "", "", "", ""
	if q.Kind == "Pod" && q.APIVersion == "v1" {
		r.typed, q.Kind, q.APIVersion = true, "", ""
	}
	q.Annotations = nil
	if p.Spec.Containers != nil {
		if st != nil {
			r.containers = st.containerRecords(len(p.Spec.Containers))
		} else {
			r.containers = make([]containerRecord, len(p.Spec.Containers))
		}
		for i := range p.Spec.Containers {
			r.containers[i] = compactContainer(&p.Spec.Containers[i])
		}
		q.Spec.Containers = nil
	}
	var m podMeta
	takeMeta(&q, &m)
	hasMeta := !zeroBytes(unsafe.Pointer(&m), unsafe.Sizeof(m))
	hasRest := !zeroBytes(unsafe.Pointer(&q), unsafe.Sizeof(q))
	if hasMeta || hasRest {
		r.more = &podMore{meta: m}
		if hasRest {
			rest := q // q stays on the stack: a plain pod allocates no copy
			r.more.rest = &rest
		}
	}
	return r
}

// zeroBytes says whether the size bytes at p are all zero. A struct whose bytes are all zero is its zero value
// (nil pointers, maps and slices, empty strings, zero times); the converse fails only for an empty string that
// points somewhere, which then keeps a rest it did not need: never a wrong pod. reflect's IsZero, exact,
// costs about as much as the rest of the record.
func zeroBytes(p unsafe.Pointer, size uintptr) bool {
	words := unsafe.Slice((*uint64)(p), size/8)
	for _, w := range words {
		if w != 0 {
			return false
		}
	}
	for _, b := range unsafe.Slice((*byte)(unsafe.Add(p, size/8*8)), size%8) {
		if b != 0 {
			return false
		}
	}
	return true
}

// nilPod marks the record of a nil pod (a snapshot built in memory may hold one).
var nilPod = &podMore{}

func compactContainer(c *corev1.Container) containerRecord {
	r := containerRecord{name: c.Name, image: c.Image, limits: c.Resources.Limits, requests: c.Resources.Requests}
	q := *c
	q.Name, q.Image, q.Resources.Limits, q.Resources.Requests, q.Ports = "", "", nil, nil, nil
	hasRest := !zeroBytes(unsafe.Pointer(&q), unsafe.Sizeof(q))
	if c.Ports != nil || hasRest {
		r.more = &containerMore{ports: c.Ports}
		if hasRest {
			rest := q
			r.more.rest = &rest
		}
	}
	return r
}

// pod builds the pod the record was made from, an object of its own (packed on its own, as Pods would keep it).
func (r *podRecord) pod() *corev1.Pod {
	var ps Pods
	ps.addRecord(*r)
	return ps.At(0)
}

// podBuilder builds pods from records into one object, its annotation map and container list reused from
// pod to pod: a pass over every pod (the engine's model, the preemption index) then makes no garbage.
type podBuilder struct {
	pod        corev1.Pod
	annos      map[string]string
	containers []corev1.Container
}

// buildPacked is the pod of a packed record of ps, valid until the builder builds the next.
func (b *podBuilder) buildPacked(ps *Pods, r *packedPod) *corev1.Pod {
	p := b.start(r.more, r.typed)
	if p == nil {
		return nil
	}
	p.Name, p.Namespace, p.Spec.NodeName = r.name, ps.str(r.namespace), ps.str(r.nodeName)
	p.Spec.SchedulerName, p.Status.Phase = ps.str(r.schedulerName), corev1.PodPhase(ps.str(r.phase))
	if annos := ps.refs.get(r.annotations); annos != nil {
		m := b.annoMap(len(annos) / 2)
		for i := 0; i < len(annos); i += 2 {
			m[ps.str(annos[i])] = ps.str(annos[i+1])
		}
		p.Annotations = m
	}
	b.setContainers(ps, p, ps.ctrs.get(r.containers))
	return p
}

// start resets the builder's pod to the record's rest, meta and type; nil for a nil pod's record.
func (b *podBuilder) start(more *podMore, typed bool) *corev1.Pod {
	if more == nilPod {
		return nil
	}
	p := &b.pod
	if more != nil && more.rest != nil {
		*p = *more.rest
	} else {
		*p = corev1.Pod{}
	}
	if typed {
		p.Kind, p.APIVersion = "Pod", "v1"
	}
	if more != nil {
		putMeta(p, &more.meta)
	}
	return p
}

// annoMap is the builder's annotation map, emptied.
func (b *podBuilder) annoMap(n int) map[string]string {
	if b.annos == nil {
		b.annos = make(map[string]string, n)
	} else {
		clear(b.annos)
	}
	return b.annos
}

// setContainers builds the records' containers into the builder's list, as the pod's.
func (b *podBuilder) setContainers(ps *Pods, p *corev1.Pod, containers []packedContainer) {
	if containers != nil {
		if cap(b.containers) < len(containers) {
			b.containers = make([]corev1.Container, len(containers))
		}
		cs := b.containers[:len(containers):len(containers)]
		if cs == nil {
			cs = []corev1.Container{} // an empty list, as read: not none
		}
		for i := range containers {
			c := &containers[i]
			if c.more != nil && c.more.rest != nil {
				cs[i] = *c.more.rest
			} else {
				cs[i] = corev1.Container{}
			}
			pc := &cs[i]
			pc.Name, pc.Image, pc.Resources.Limits, pc.Resources.Requests = ps.str(c.name), ps.str(c.image), c.limits, c.requests
			if c.more != nil {
				pc.Ports = c.more.ports
			}
		}
		p.Spec.Containers = cs
	}
}

// Reader is At for a pass that reads each pod and keeps nothing of the object itself: the pod it gives is
// valid until its next call (the object, its annotation map and its container list are reused); strings
// and the pod's other maps and slices may be kept. Each call of Reader has its own object.
func (ps *Pods) Reader() func(i int) *corev1.Pod {
	var b podBuilder
	return func(i int) *corev1.Pod {
		if i < len(ps.whole) {
			return ps.whole[i]
		}
		return b.buildPacked(ps, ps.record(i-len(ps.whole)))
	}
}

// Scan is All for such a pass: each pod valid until the next is yielded (Reader).
func (ps *Pods) Scan() iter.Seq[*corev1.Pod] {
	return func(yield func(*corev1.Pod) bool) {
		read := ps.Reader()
		for i := range ps.Len() {
			if !yield(read(i)) {
				return
			}
		}
	}
}
