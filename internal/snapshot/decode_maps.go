package snapshot

import (
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

func (resourceListDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	m := (*corev1.ResourceList)(ptr)
	if iter.ReadNil() {
		*m = nil
		return
	}
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
