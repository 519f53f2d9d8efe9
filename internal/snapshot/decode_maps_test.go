package snapshot

import (
	"reflect"
	"strings"
	"testing"

	jsoniter "github.com/json-iterator/go"
	corev1 "k8s.io/api/core/v1"
)

// FuzzMapDecodersAsJSONIterator holds the snapshot's map decoders to json-iterator's own: a Pod or Node read
// by the one is read by the other into equal objects, and what one refuses the other refuses, but for the
// documented first key written null (which json-iterator alone takes, as ""); read through a list cache (twice,
// the second time from the cache) it is read the same.
func FuzzMapDecodersAsJSONIterator(f *testing.F) {
	for _, s := range []string{
		`{"kind":"Pod","metadata":{"name":"p","annotations":{"hami.io/vgpu-node":"n","a":"b"},"labels":{"x":"y"}},` +
			`"spec":{"nodeSelector":{"k":"v"},"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1","cpu":"500m"},"requests":{"memory":"4Gi"}}}]}}`,
		`{"metadata":{"annotations":null,"labels":{}},"spec":{"containers":[{"resources":{"limits":null,"requests":{}}}]}}`,
		`{"metadata":{"annotations":{"a":"1"},"annotations":{"b":"2","a":"3"}}}`,
		`{"metadata":{"annotations":{"a":null,"b":"\u00e9\n"}}}`, `{"metadata":{"annotations":{"a":1}}}`,
		`{"metadata":{"annotations":{null:"x"}}}`, `{"metadata":{"annotations":{"a":"x",null:"y"}}}`, `{"metadata":{"annotations":{"a":"x",}}}`,
		`{"metadata":{"annotations":[]}}`, `{"metadata":{"annotations":"x"}}`,
		`{"spec":{"containers":[{"resources":{"limits":{"cpu":1,"memory":"1e3","x":null,"y":" 2 "}}}]}}`,
		`{"spec":{"containers":[{"resources":{"limits":{"cpu":"bad"}}}]}}`, `{"spec":{"containers":[{"resources":{"limits":{"cpu":{}}}}]}}`,
		`{"spec":{"overhead":{"cpu":"1"},"containers":[{"resources":{"requests":{"cpu" : "2" , "cpu":"3"}}}]}}`,
		`{"kind":"Node","status":{"allocatable":{"cpu":"128","memory":"1Ti","pods":"110"},"capacity":{"cpu":"128"}}}`,
	} {
		f.Add(s)
	}
	general := jsoniter.ConfigCompatibleWithStandardLibrary
	f.Fuzz(func(t *testing.T, s string) {
		var cache listCache
		for _, fresh := range []func() any{func() any { return &corev1.Pod{} }, func() any { return &corev1.Node{} }} {
			ours, cached, again, theirs := fresh(), fresh(), fresh(), fresh()
			errOurs, errTheirs := fastJSON.UnmarshalFromString(s, ours), general.UnmarshalFromString(s, theirs)
			// Through a goroutine's list cache, read twice: the second read takes its lists from the cache.
			errCached, errAgain := unmarshalCached([]byte(s), cached, &cache), unmarshalCached([]byte(s), again, &cache)
			if (errCached == nil) != (errOurs == nil) || (errAgain == nil) != (errOurs == nil) {
				t.Fatalf("%q: %v without the list cache, %v and %v with it", s, errOurs, errCached, errAgain)
			}
			if errOurs == nil && (!reflect.DeepEqual(cached, ours) || !reflect.DeepEqual(again, ours)) {
				t.Fatalf("%q: %+v without the list cache, %+v and %+v with it", s, ours, cached, again)
			}
			switch {
			case errOurs == nil && errTheirs == nil:
				if !reflect.DeepEqual(ours, theirs) {
					t.Fatalf("%q: %+v, json-iterator's map decoder %+v", s, ours, theirs)
				}
			case errOurs == nil:
				t.Fatalf("%q: read here, json-iterator's map decoder refuses it: %v", s, errTheirs)
			case errTheirs == nil && !strings.Contains(s, "null"):
				t.Fatalf("%q: refused here (%v), json-iterator's map decoder reads it", s, errOurs)
			}
		}
	})
}
