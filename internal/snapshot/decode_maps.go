package snapshot

import (
	"errors"
	"io"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The maps of every pod (annotations, labels, resource limits and requests) were two thirds of decoding a
// snapshot: json-iterator's general map decoder assigns each entry through reflection into a map made empty
// and grown entry by entry. These decoders read the same JSON the same way (keys and values by the same
// iterator calls, a null map as nil, a repeated field merged into the map already there) and make each map
// once at its size. One input differs: a first key written null, which json-iterator's map decoder reads as
// "" and every JSON reader refuses, is refused here too (the object then goes to encoding/json, whose error
// names it).

// decodeMapsConfig is json-iterator configured as encoding/json behaves (ConfigCompatibleWithStandardLibrary)
// with the two map decoders.
func decodeMapsConfig() jsoniter.API {
	api := jsoniter.Config{EscapeHTML: true, SortMapKeys: true, ValidateJsonRawMessage: true}.Froze()
	api.RegisterExtension(jsoniter.DecoderExtension{
		reflect2.TypeOf(map[string]string(nil)):   stringMapDecoder{},
		reflect2.TypeOf(corev1.ResourceList(nil)): resourceListDecoder{},
	})
	return api
}

// mapEntries is the stack room for a map's entries before the map is made; more spill to the heap.
const mapEntries = 16

type stringMapDecoder struct{}

func (stringMapDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	m := (*map[string]string)(ptr)
	if iter.ReadNil() {
		*m = nil
		return
	}
	type entry struct{ k, v string }
	var buf [mapEntries]entry
	entries := buf[:0]
	iter.ReadMapCB(func(it *jsoniter.Iterator, key string) bool {
		entries = append(entries, entry{key, it.ReadString()})
		return true
	})
	if *m == nil {
		*m = make(map[string]string, len(entries))
	}
	for _, e := range entries {
		(*m)[e.k] = e.v
	}
}

type resourceListDecoder struct{}

// listCache is the resource lists one decoding goroutine has read, by their JSON text: most pods of a
// snapshot ask for one of a few lists, which the snapshot then holds once (sharing.list), so a list read
// before is not decoded again. A cached list is read-only, as every snapshot object is: pods' requests and
// limits and nodes' capacity and allocatable with the same text are one map, so an edit in place (without a
// DeepCopy) would change every object that shares it.
//
// It also holds the strings and toleration lists the hand decoder (scan_json.go, decode_pod.go) read that
// repeat from object to object, so that one read again is not allocated again.
type listCache struct {
	lists map[string]corev1.ResourceList
	raw   []byte
	strs  map[string]string
	tols  map[string]tolerationList
	// pod and containers are the hand decoder's scratch for a pod it makes a record of (scanObject): reused
	// from pod to pod, so that a pod read costs no corev1.Pod and no container list of its own.
	pod        corev1.Pod
	containers []corev1.Container
	// into is where the next pod's record goes (the batch's slot for the item); nil: a record of its own.
	into *podRecord
	// text is the slab the hand decoder carves the strings it keeps from (keep): what a snapshot's objects
	// keep lives as long as the snapshot, so one allocation serves many.
	text []byte
	// annos and ctrs are the slabs keepList and containerRecords carve a pod's annotation list and container
	// records from: they live until the record is packed (Pods.pack copies them), so a reader that packs every
	// record of a batch before decoding the next reuses them (reuseSlabs).
	annos slabs[string]
	ctrs  slabs[containerRecord]
}

// slabs are arrays that short lists are carved from, all[at] the one in use; reuse starts again from the first.
type slabs[T any] struct {
	all [][]T
	at  int
}

// carve is n zero elements at their length, from a slab of size elements.
func (sl *slabs[T]) carve(n, size int) []T {
	if sl.at < len(sl.all) && len(sl.all[sl.at])+n > cap(sl.all[sl.at]) {
		sl.at++
	}
	if sl.at == len(sl.all) {
		sl.all = append(sl.all, make([]T, 0, size))
	}
	l := &sl.all[sl.at]
	start := len(*l)
	*l = (*l)[:start+n]
	return (*l)[start : start+n : start+n]
}

// reuse lets carve give the slabs again from the start: nothing carved so far is held any more.
func (sl *slabs[T]) reuse() {
	for i := range sl.all[:min(sl.at+1, len(sl.all))] {
		clear(sl.all[i]) // zero for the next carve, and what they held is not kept alive by them
		sl.all[i] = sl.all[i][:0]
	}
	sl.at = 0
}

// reuseSlabs lets keepList and containerRecords carve their slabs again: every record they served is packed.
func (c *listCache) reuseSlabs() {
	c.annos.reuse()
	c.ctrs.reuse()
}

// slabBytes, slabStrings and slabContainers are the sizes of listCache's slabs; a value over an eighth of one gets its own.
const (
	slabBytes      = 32 << 10
	slabStrings    = 2 << 10
	slabContainers = 512
)

// keep is raw as a string carved from the text slab.
func (c *listCache) keep(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	if len(raw) > slabBytes/8 {
		return string(raw)
	}
	if len(c.text)+len(raw) > cap(c.text) {
		c.text = make([]byte, 0, slabBytes)
	}
	start := len(c.text)
	c.text = append(c.text, raw...)
	return unsafe.String(&c.text[start], len(raw)) // never written again: the slab only grows
}

// containerRecords are n zero container records carved from the container slab, at their length.
func (c *listCache) containerRecords(n int) []containerRecord {
	if n == 0 || n > slabContainers/8 {
		return make([]containerRecord, n)
	}
	return c.ctrs.carve(n, slabContainers)
}

// keepList is a copy of kv carved from the list slabs, at its length (an append copies it); non-nil for none.
func (c *listCache) keepList(kv []string) []string {
	if len(kv) == 0 || len(kv) > slabStrings/8 {
		return append(make([]string, 0, len(kv)), kv...)
	}
	l := c.annos.carve(len(kv), slabStrings)
	copy(l, kv)
	return l
}

// maxListText bounds the JSON text of a cached list; longer lists are decoded each time.
const maxListText = 512

// unmarshalCached is fastJSON.Unmarshal with the goroutine's list cache given to the list decoder.
func unmarshalCached(js []byte, into any, cache *listCache) error {
	iter := fastJSON.BorrowIterator(js)
	defer fastJSON.ReturnIterator(iter)
	iter.Attachment = cache
	iter.ReadVal(into)
	// As Unmarshal: an error stands; else only whitespace may follow the value.
	if iter.Error != nil && !errors.Is(iter.Error, io.EOF) {
		return iter.Error
	}
	iter.WhatIsNext()
	if errors.Is(iter.Error, io.EOF) {
		return nil
	}
	iter.ReportError("Unmarshal", "there are bytes left after unmarshal")
	return iter.Error
}

func (d resourceListDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	m := (*corev1.ResourceList)(ptr)
	if iter.ReadNil() {
		*m = nil
		return
	}
	cache, _ := iter.Attachment.(*listCache)
	if cache == nil || *m != nil {
		d.read(m, iter)
		return
	}
	if cache.raw == nil {
		cache.raw = make([]byte, 0, maxListText) // json-iterator's capture refuses a nil buffer
	}
	cache.raw = iter.SkipAndAppendBytes(cache.raw[:0])
	if iter.Error != nil && !errors.Is(iter.Error, io.EOF) {
		return
	}
	if l, ok := cache.lists[string(cache.raw)]; ok {
		*m = l
		return
	}
	var l corev1.ResourceList
	if err := fastJSON.Unmarshal(cache.raw, &l); err != nil {
		iter.ReportError("ResourceList", err.Error())
		return
	}
	if len(cache.raw) <= maxListText && len(cache.lists) < maxShared { // bounded: a worker keeps its cache for the whole read
		if cache.lists == nil {
			cache.lists = map[string]corev1.ResourceList{}
		}
		cache.lists[string(cache.raw)] = l
	}
	*m = l
}

// read decodes the list's entries into *m, made at their number when nil.
func (resourceListDecoder) read(m *corev1.ResourceList, iter *jsoniter.Iterator) {
	type entry struct {
		k corev1.ResourceName
		v resource.Quantity
	}
	var buf [mapEntries]entry
	entries := buf[:0]
	iter.ReadMapCB(func(it *jsoniter.Iterator, key string) bool {
		var q resource.Quantity
		// As json-iterator decodes a json.Unmarshaler: the value's bytes, whitespace skipped, to UnmarshalJSON.
		it.WhatIsNext()
		if err := q.UnmarshalJSON(it.SkipAndReturnBytes()); err != nil {
			it.ReportError("unmarshalerDecoder", err.Error())
			return false
		}
		entries = append(entries, entry{corev1.ResourceName(key), q})
		return true
	})
	if *m == nil {
		*m = make(corev1.ResourceList, len(entries))
	}
	for _, e := range entries {
		(*m)[e.k] = e.v
	}
}
