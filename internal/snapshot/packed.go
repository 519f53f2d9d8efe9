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

// packedPod is a podRecord as Pods keeps it (podRecord's fields, its strings but the name as references).
type packedPod struct {
	name                                      string
	namespace, nodeName, schedulerName, phase strRef
	typed                                     bool
	// annotations are key, value, key, value...: nil for no map, empty for an empty one.
	annotations []strRef
	containers  []packedContainer // nil for none, empty for an empty list
	more        *podMore
}

// packedContainer is a containerRecord as Pods keeps it, its name and image as references (32 bytes against 56).
type packedContainer struct {
	name, image      strRef
	limits, requests corev1.ResourceList
	more             *containerMore
}

// noAnnotations and noContainers are an empty map's and an empty list's (not nil: none).
var (
	noAnnotations = []strRef{}
	noContainers  = []packedContainer{}
)

// ctrSlab is how many containers Pods carves its container lists from at once (16 KiB).
const ctrSlab = 512

// refSlab is how many references Pods carves its annotation lists from at once (16 KiB).
const refSlab = 4 << 10

// pack is r as the Pods keep it, its strings in the Pods' table.
func (ps *Pods) pack(r *podRecord) packedPod {
	if ps.strs == nil {
		ps.strs = newStrTable()
	}
	t := ps.strs
	out := packedPod{name: r.name, namespace: t.shared(r.namespace), nodeName: t.shared(r.nodeName),
		schedulerName: t.shared(r.schedulerName), phase: t.shared(string(r.phase)), typed: r.typed, more: r.more}
	switch cs := r.containers; {
	case cs == nil:
	case len(cs) == 0:
		out.containers = noContainers
	default:
		pcs := ps.containers(len(cs))
		for i := range cs {
			c := &cs[i]
			pcs[i] = packedContainer{name: t.shared(c.name), image: t.shared(c.image), limits: c.limits, requests: c.requests, more: c.more}
		}
		out.containers = pcs
	}
	switch kv := r.annotations; {
	case kv == nil:
	case len(kv) == 0:
		out.annotations = noAnnotations
	default:
		refs := ps.refs(len(kv))
		for i := 0; i < len(kv); i += 2 {
			refs[i] = t.shared(kv[i])
			if isRepeatingAnnotation(kv[i]) {
				refs[i+1] = t.shared(kv[i+1])
			} else {
				refs[i+1] = t.unique(kv[i+1])
			}
		}
		out.annotations = refs
	}
	return out
}

// refs are n references carved from the Pods' slab, at their length.
func (ps *Pods) refs(n int) []strRef {
	if n > refSlab/8 {
		return make([]strRef, n)
	}
	if len(ps.refSlab)+n > cap(ps.refSlab) {
		ps.refSlab = make([]strRef, 0, refSlab)
	}
	start := len(ps.refSlab)
	ps.refSlab = ps.refSlab[:start+n]
	return ps.refSlab[start : start+n : start+n]
}

// containers are n packed containers carved from the Pods' slab, at their length.
func (ps *Pods) containers(n int) []packedContainer {
	if n > ctrSlab/8 {
		return make([]packedContainer, n)
	}
	if len(ps.ctrSlab)+n > cap(ps.ctrSlab) {
		ps.ctrSlab = make([]packedContainer, 0, ctrSlab)
	}
	start := len(ps.ctrSlab)
	ps.ctrSlab = ps.ctrSlab[:start+n]
	return ps.ctrSlab[start : start+n : start+n]
}

// str is the string of a reference into the Pods' table.
func (ps *Pods) str(r strRef) string {
	if r == 0 {
		return ""
	}
	return ps.strs.str(r)
}
