package codec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// The shapes device plugins write: the fast reader must take them (or it saves nothing).
var fastRegisterShapes = []string{
	`[{"id":"GPU-0","count":10,"devmem":81920,"devcore":100,"type":"NVIDIA A100-SXM4-80GB","mode":"hami-core","health":true},` +
		`{"id":"GPU-1","index":1,"count":10,"devmem":81920,"devcore":100,"type":"NVIDIA A100-SXM4-80GB","numa":1,"mode":"hami-core","health":true}]`,
	` [ {"id":"GPU-a","index":0,"count":10,"devmem":24576,"devcore":100,"type":"NVIDIA-RTX4090","numa":0,"mode":"hami-core","health":true,` +
		`"devicevendor":"NVIDIA","custominfo":{"NetworkID":3,"x":[1,-2.5e3,null,true,"a\"b\u00e9"]}} ] `,
	`[]`,
	`[{"id":"DCU-1","devmem":65536,"health":false,"migtemplate":[{"models":[]}]}]`,
}

func TestFastRegisterReadsPluginShapes(t *testing.T) {
	for _, s := range fastRegisterShapes {
		trimmed := strings.TrimFunc(s, unicode.IsSpace)
		got, ok := fastRegister(trimmed)
		if !ok {
			t.Fatalf("%s: the fast reader leaves it to the general one", s)
		}
		var want []DeviceInfo
		if err := json.Unmarshal([]byte(trimmed), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %+v, encoding/json %+v", s, got, want)
		}
	}
}

// FuzzFastRegisterAsStandard holds the fast register reader to encoding/json: whatever it reads, encoding/json
// reads into the same devices.
func FuzzFastRegisterAsStandard(f *testing.F) {
	for _, s := range append(fastRegisterShapes,
		`[{"id":"a","ID":"b"}]`, `[{"Id":"a"}]`, `[{"id":"a","count":2147483648}]`, `[{"id":"a","count":-2147483648}]`,
		`[{"id":"a","index":-0}]`, `[{"id":"a","index":01}]`, `[{"id":"a","devmem":9223372036854775808}]`,
		`[{"id":"a","devmem":-9223372036854775808}]`, `[{"id":"a","numa":1.5}]`, `[{"id":"a\u0041"}]`, `[{"id":"a","x":"\q"}]`,
		`[{"id":"a","\u212aey":1}]`, `[{"id":"a","migProfiles":[]}]`, `[{"id":"a"},]`, `[{"id":"a"}]]`, `[{"id":"a","health":tru}]`,
		`[null]`, `[{"id":null}]`, `[{"id":"a","x":{"y":[[[[]]]]}}]`, `[{"id":"a","x":{"y":1,}}]`, `[{"id":"a","x":1.}]`,
		`[{"id":"a","x":-}]`, `[{"id":"a","x":1e}]`, `[{"id":"a","x":"\u12g4"}]`, "[{\"id\":\"a\tb\"}]", "[{\"id\":\"a\xffb\"}]") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		trimmed := strings.TrimFunc(s, unicode.IsSpace)
		got, ok := fastRegister(trimmed)
		if !ok {
			return // read by decodeJSONArray, which FuzzJSONArrayAsStandard checks
		}
		var want []DeviceInfo
		if err := json.Unmarshal([]byte(trimmed), &want); err != nil {
			t.Fatalf("the fast reader reads %q, encoding/json refuses it: %v", s, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %+v, encoding/json %+v", s, got, want)
		}
	})
}
