package snapshot

import (
	"unsafe"

	corev1 "k8s.io/api/core/v1"
)

// A snapshot's pods as it keeps them: the decoder's podRecord with its strings packed. The strings of a large
// snapshot's pods are few and repeated (namespaces, node names, annotation keys, a scheduler's name, a phase)
// or unique (a pod's device list); a record held 16 bytes for each, and its annotations a 16-byte string
// header per key and per value (128 bytes for a genbig pod's four). Packed, each is a 4-byte reference into the
// Pods' string table (strTable): a repeated string is held once, a unique one once as before, and the list of
// references has no pointer for the collector to follow.

// strRef is a string's index in a strTable; 0 is "".
type strRef uint32

// strChunkBits sizes a strTable's chunks (4,096 strings, 64 KiB): the table grows without copying what it holds.
const strChunkBits = 12

// strTable holds the strings of a snapshot's pod records: the repeated ones once each (index), the unique ones
// as they come.
type strTable struct {
	chunks [][]string
	n      int
	index  map[string]strRef
	// recent remembers the reference of a string by where its bytes are: the decoder shares each repeated string
	// within its goroutine, so the same bytes come again and again and are found without hashing them. An
	// entry keeps its string, so its bytes cannot be reused for another string while it is there.
	recent [256]recentRef
}

type recentRef struct {
	s   string
	ref strRef
}

func newStrTable() *strTable {
	t := &strTable{index: map[string]strRef{"": 0}}
	t.add("")
	return t
}

// add appends s and returns its reference.
func (t *strTable) add(s string) strRef {
	if t.n>>strChunkBits == len(t.chunks) {
		t.chunks = append(t.chunks, make([]string, 1<<strChunkBits))
	}
	t.chunks[t.n>>strChunkBits][t.n&(1<<strChunkBits-1)] = s
	t.n++
	return strRef(t.n - 1)
}

// str is the string of a reference.
func (t *strTable) str(r strRef) string {
	return t.chunks[r>>strChunkBits][r&(1<<strChunkBits-1)]
}

// shared is the reference of a string that repeats from pod to pod: held once.
func (t *strTable) shared(s string) strRef {
	if s == "" {
		return 0
	}
	p := unsafe.StringData(s)
	e := &t.recent[(uintptr(unsafe.Pointer(p))>>3^uintptr(len(s)))&255]
	if unsafe.StringData(e.s) == p && len(e.s) == len(s) {
		return e.ref
	}
	r, ok := t.index[s]
	if !ok {
		r = t.add(s)
		t.index[s] = r
	}
	*e = recentRef{s, r}
	return r
}

// unique is the reference of a string that does not repeat (a pod's device list): added without a lookup.
func (t *strTable) unique(s string) strRef {
	if s == "" {
		return 0
	}
	return t.add(s)
}

// packedPod is a podRecord as Pods keeps it (podRecord's fields, its strings but the name as references, its
// lists as spans of the Pods' stores): 64 bytes.
type packedPod struct {
	name                                      string
	namespace, nodeName, schedulerName, phase strRef
	// annotations are key, value, key, value... (Pods.refs): none for no map, empty for an empty one.
	annotations span
	containers  span // Pods.ctrs; none for no list, empty for an empty one
	more        *podMore
	typed       bool
}

// span is a list's place in a chunked store: its first element's index and its length; n < 0: no list (nil).
type span struct {
	at uint32
	n  int32
}

var noList = span{n: -1}

// chunked is a store of short lists, a chunk of 1<<shift elements at a time: a list is never split between two
// chunks (a list longer than a chunk gets a chunk of its own, full from the start), so a span finds it as chunk
// at>>shift, offset at&(1<<shift-1). Appending never copies what is held.
type chunked[T any] struct {
	chunks [][]T
	shift  uint
}

// add is room for a list of n elements, and its span.
func (c *chunked[T]) add(n int) ([]T, span) {
	size := 1 << c.shift
	last := len(c.chunks) - 1
	if last < 0 || len(c.chunks[last])+n > cap(c.chunks[last]) {
		c.chunks = append(c.chunks, make([]T, 0, max(size, n)))
		last++
	}
	l := &c.chunks[last]
	start := len(*l)
	*l = (*l)[:start+n]
	return (*l)[start : start+n : start+n], span{at: uint32(last)<<c.shift | uint32(start), n: int32(n)}
}

// get is the list of a span: nil for none.
func (c *chunked[T]) get(sp span) []T {
	if sp.n < 0 {
		return nil
	}
	if sp.n == 0 {
		return []T{} // not nil: an empty list, as read
	}
	chunk := c.chunks[sp.at>>c.shift]
	off := int(sp.at & (1<<c.shift - 1))
	return chunk[off : off+int(sp.n) : off+int(sp.n)]
}

// packedContainer is a containerRecord as Pods keeps it, its name and image as references (32 bytes against 56).
type packedContainer struct {
	name, image      strRef
	limits, requests corev1.ResourceList
	more             *containerMore
}

// The Pods' stores' chunks: 4,096 references (16 KiB) and 512 containers (16 KiB).
const (
	refShift = 12
	ctrShift = 9
)

// pack is r as the Pods keep it, its strings in the Pods' table.
func (ps *Pods) pack(r *podRecord) packedPod {
	if ps.strs == nil {
		ps.strs = newStrTable()
	}
	t := ps.strs
	out := packedPod{name: r.name, namespace: t.shared(r.namespace), nodeName: t.shared(r.nodeName),
		schedulerName: t.shared(r.schedulerName), phase: t.shared(string(r.phase)), typed: r.typed, more: r.more,
		annotations: noList, containers: noList}
	if cs := r.containers; cs != nil {
		if ps.ctrs.shift == 0 {
			ps.ctrs.shift = ctrShift
		}
		var pcs []packedContainer
		pcs, out.containers = ps.ctrs.add(len(cs))
		for i := range cs {
			c := &cs[i]
			pcs[i] = packedContainer{name: t.shared(c.name), image: t.shared(c.image), limits: c.limits, requests: c.requests, more: c.more}
		}
	}
	if kv := r.annotations; kv != nil {
		if ps.refs.shift == 0 {
			ps.refs.shift = refShift
		}
		var refs []strRef
		refs, out.annotations = ps.refs.add(len(kv))
		for i := 0; i < len(kv); i += 2 {
			refs[i] = t.shared(kv[i])
			if isRepeatingAnnotation(kv[i]) {
				refs[i+1] = t.shared(kv[i+1])
			} else {
				refs[i+1] = t.unique(kv[i+1])
			}
		}
	}
	return out
}

// str is the string of a reference into the Pods' table.
func (ps *Pods) str(r strRef) string {
	if r == 0 {
		return ""
	}
	return ps.strs.str(r)
}
