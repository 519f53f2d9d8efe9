package snapshot

import (
	"io"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
)

// ParseWhole is Parse without trimming the pods.
func ParseWhole(data []byte, name string) (*Snapshot, error) {
	keepWholePods = true
	defer func() { keepWholePods = false }()
	return Parse(data, name)
}

// DecodeItem decodes one item as a snapshot's reader does (the hand decoder first), and says whether the hand
// decoder read it whole (a pod or a node).
func DecodeItem(js []byte) (obj any, hand bool, err error) {
	sc, ok := scanObject(js, nil)
	hand = ok && (sc.pod != nil || sc.node != nil)
	obj, err = decodeObject(js)
	return obj, hand, err
}

// DecodeItemRecord decodes one item as a snapshot's reader does with a decoding goroutine's cache (read
// twice, the second time through the cache's strings, lists and scratch pod): a pod taken is its record, and
// what is returned is the pod each record builds; ok is false when the hand decoder did not make a record.
func DecodeItemRecord(js []byte) (first, again *corev1.Pod, ok bool) {
	var cache listCache
	sc, ok1 := scanObject(js, &cache)
	sc2, ok2 := scanObject(js, &cache)
	if !ok1 || !ok2 || sc.rec == nil || sc2.rec == nil {
		return nil, nil, false
	}
	var ps Pods // packed as the snapshot keeps them, the second through the first's strings
	ps.addRecord(*sc.rec)
	ps.addRecord(*sc2.rec)
	return ps.At(0), ps.Reader()(1), true
}

// packedTwice are the Pods holding r twice, packed: the second through the strings the first added.
func packedTwice(r podRecord) *Pods {
	var ps Pods
	ps.addRecord(r)
	ps.addRecord(r)
	return &ps
}

// DecodeItemByReflection decodes one item by json-iterator's reflection alone, as the reader did before the
// hand decoder.
func DecodeItemByReflection(js []byte) (any, error) { return decodeReflect(js, nil) }

// RecordRoundTrip is the pod built from the compact record a snapshot keeps of p (packed, after another).
func RecordRoundTrip(p *corev1.Pod) *corev1.Pod {
	return packedTwice(compactPod(p)).At(1)
}

// RecordParts says what of p the snapshot keeps beside its record's flat fields (podRecord): the meta of a
// controller's admitted pod, and the rest, of the pod or of any container.
func RecordParts(p *corev1.Pod) (meta, rest bool) {
	r := compactPod(p)
	for _, c := range r.containers {
		rest = rest || c.more != nil && c.more.rest != nil
	}
	if r.more == nil {
		return false, rest
	}
	return !zeroBytes(unsafe.Pointer(&r.more.meta), unsafe.Sizeof(r.more.meta)), rest || r.more.rest != nil
}

// WholeList is the list writer WriteList replaced (writelist_test.go): the whole list marshalled, then indented
// or converted.
func WholeList(s *Snapshot, w io.Writer, format string) error { return wholeList(s, w, format) }
