package codec

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzJSONArrayAsStandard holds decodeJSONArray's fast path to encoding/json: whatever json-iterator reads,
// encoding/json reads too, into the same values, for each list decodeJSONArray decodes (registers, MIG
// allocations, pair scores). A value json-iterator refuses goes to encoding/json anyway.
func FuzzJSONArrayAsStandard(f *testing.F) {
	for _, s := range []string{
		`[{"id":"GPU-0","index":0,"count":10,"devmem":81920,"devcore":100,"type":"NVIDIA-A100","numa":0,"mode":"hami-core","health":true}]`,
		`[{"id":"a","customInfo":{"NetworkID":1}},{"ID":"b","Count":2}]`, `[{"id":"a","count":1.0}]`, `[{"id":"a","count":1e2}]`,
		`[{"id":"a","count":"1"}]`, `[{"id":"a","health":"true"}]`, `[{"id":"a","count":4294967296}]`, `[{"id":"\ud800"}]`,
		`[{"id":"a"} ]x`, `[{"id":"a",}]`, `[{"id":"a","id":"b"}]`, "[{\"id\":\"a\xff\"}]", `[null]`, `[{"id":null}]`,
		`[{"gpuUUID":"GPU-a","containerIndex":0,"deviceIndex":0,"profile":"1g.10gb","placement":{"start":0,"size":1}}]`,
		`[{"uuid":"GPU-a","score":{"GPU-b":100}}]`, `[{"uuid":"GPU-a","score":{"GPU-b":-1.5}}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sameAsStandard(t, s, func() any { return &[]DeviceInfo{} })
		sameAsStandard(t, s, func() any { return &[]MigAllocation{} })
		sameAsStandard(t, s, func() any { return &[]PairScore{} })
	})
}

func sameAsStandard(t *testing.T, s string, fresh func() any) {
	t.Helper()
	fast, std := fresh(), fresh()
	if !utf8.ValidString(s) || !json.Valid([]byte(s)) || fastJSON.UnmarshalFromString(s, fast) != nil {
		return // decodeJSONArray's encoding/json path
	}
	if err := json.Unmarshal([]byte(s), std); err != nil {
		t.Fatalf("json-iterator reads %q into %T, encoding/json refuses it: %v", s, fast, err)
	}
	if !reflect.DeepEqual(fast, std) {
		t.Fatalf("%q into %T: json-iterator %+v, encoding/json %+v", s, fast, fast, std)
	}
}
