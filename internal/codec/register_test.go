package codec

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseNodeRegister(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  []DeviceInfo
	}{
		{"legacy 7 fields (<= v2.4)", "GPU-a,10,15360,100,NVIDIA-Tesla T4,0,true:GPU-b,10,15360,100,NVIDIA-Tesla T4,1,false:",
			[]DeviceInfo{
				{ID: "GPU-a", Index: 0, Count: 10, Devmem: 15360, Devcore: 100, Type: "NVIDIA-Tesla T4", Numa: 0, Health: true},
				{ID: "GPU-b", Index: 1, Count: 10, Devmem: 15360, Devcore: 100, Type: "NVIDIA-Tesla T4", Numa: 1, Health: false},
			}},
		{"legacy 9 fields (v2.5-v2.7)", "GPU-a,10,81920,100,NVIDIA-NVIDIA A100-SXM4-80GB,0,true,3,hami-core:",
			[]DeviceInfo{{ID: "GPU-a", Index: 3, Count: 10, Devmem: 81920, Devcore: 100, Type: "NVIDIA-NVIDIA A100-SXM4-80GB", Health: true, Mode: "hami-core"}}},
		{"legacy mixed 7 and 9", "GPU-a,1,2,3,T,0,1:GPU-b,1,2,3,T,0,0,5,mig",
			[]DeviceInfo{
				{ID: "GPU-a", Index: 0, Count: 1, Devmem: 2, Devcore: 3, Type: "T", Health: true},
				{ID: "GPU-b", Index: 5, Count: 1, Devmem: 2, Devcore: 3, Type: "T", Mode: "mig"},
			}},
		{"legacy empty segments and trailing colons", "::GPU-a,1,2,3,T,0,true::: :GPU-b,1,2,3,T,0,true,1,mps::",
			[]DeviceInfo{
				{ID: "GPU-a", Index: 0, Count: 1, Devmem: 2, Devcore: 3, Type: "T", Health: true},
				{ID: "GPU-b", Index: 1, Count: 1, Devmem: 2, Devcore: 3, Type: "T", Health: true, Mode: "mps"},
			}},
		{"legacy negative numa", "GPU-a,1,2,3,T,-1,true:", []DeviceInfo{{ID: "GPU-a", Count: 1, Devmem: 2, Devcore: 3, Type: "T", Health: true}}},
		{"legacy surrounding blanks", "\n GPU-a,1,2,3,T,0,true: \n", []DeviceInfo{{ID: "GPU-a", Count: 1, Devmem: 2, Devcore: 3, Type: "T", Health: true}}},
		{"legacy only colons", ":", nil},
		{"json v2.8+", `[{"id":"GPU-a","index":1,"count":10,"devmem":24576,"devcore":100,"type":"NVIDIA A10","numa":1,"mode":"hami-core","health":true}]`,
			[]DeviceInfo{{ID: "GPU-a", Index: 1, Count: 10, Devmem: 24576, Devcore: 100, Type: "NVIDIA A10", Numa: 1, Mode: "hami-core", Health: true}}},
		{"json absent health index numa", `[{"id":"GPU-a","count":10,"devmem":24576,"devcore":100,"type":"NVIDIA A10","mode":"hami-core"}]`,
			[]DeviceInfo{{ID: "GPU-a", Count: 10, Devmem: 24576, Devcore: 100, Type: "NVIDIA A10", Mode: "hami-core"}}},
		{"json negative numa", `[{"id":"GPU-a","numa":-1,"health":true}]`, []DeviceInfo{{ID: "GPU-a", Health: true}}},
		{"json blanks around", "  [{\"id\":\"GPU-a\"}]\n", []DeviceInfo{{ID: "GPU-a"}}},
		{"json empty", "[]", nil},
		{"json unknown fields ignored", `[{"id":"GPU-a","future":{"x":1}}]`, []DeviceInfo{{ID: "GPU-a"}}},
		{"json mig (v2.10)", `[{"id":"GPU-a","count":7,"devmem":81920,"devcore":100,"type":"NVIDIA A100","mode":"mig","health":true,` +
			`"migProfiles":[{"name":"1g.10gb","memoryMB":9856,"core":15,"sliceCount":1,"placements":[{"start":0,"size":1},{"start":1,"size":1}]},` +
			`{"name":"7g.80gb","memoryMB":80000,"core":100,"sliceCount":7,"placements":[]}]}]`,
			[]DeviceInfo{{ID: "GPU-a", Count: 7, Devmem: 81920, Devcore: 100, Type: "NVIDIA A100", Mode: "mig", Health: true,
				MigProfiles: []MigProfile{
					{Name: "1g.10gb", MemoryMB: 9856, Core: 15, SliceCount: 1, Placements: []MigPlacement{{0, 1}, {1, 1}}},
					{Name: "7g.80gb", MemoryMB: 80000, Core: 100, SliceCount: 7},
				}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNodeRegister(tt.value)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseNodeRegisterErrors(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  []string // substrings of the message besides the key
	}{
		{"empty", "", []string{"empty value"}},
		{"blank", " \n\t", []string{"empty value"}},
		{"5 fields", "GPU-a,1,2,3,T:", []string{"device 0", "has 5 fields"}},
		{"8 fields second device", "GPU-a,1,2,3,T,0,true:GPU-b,1,2,3,T,0,true,1:", []string{"device 1", "has 8 fields"}},
		{"10 fields", "GPU-a,1,2,3,T,0,true,0,hami-core,x:", []string{"device 0", "has 10 fields"}},
		{"bad devmem", "GPU-a,1,2,3,T,0,true:GPU-b,1,2,3,T,0,true:GPU-c,1,12x,3,T,0,true:", []string{"device 2, field 2 (devmem)", `"12x" is not an integer`}},
		{"bad count", "GPU-a,ten,2,3,T,0,true:", []string{"device 0, field 1 (count)", `"ten"`}},
		{"count overflows int32", "GPU-a,4294967296,2,3,T,0,true:", []string{"field 1 (count)"}},
		{"empty devcore", "GPU-a,1,2,,T,0,true:", []string{"field 3 (devcore)", "is empty"}},
		{"bad numa", "GPU-a,1,2,3,T,x,true:", []string{"field 5 (numa)"}},
		{"bad health", "GPU-a,1,2,3,T,0,yes:", []string{"device 0, field 6 (health)", `"yes" is not a boolean`}},
		{"bad index", "GPU-a,1,2,3,T,0,true,one,hami-core:", []string{"field 7 (index)"}},
		{"negative index", "GPU-a,1,2,3,T,0,true,-1,hami-core:", []string{"field 7 (index)", "is negative"}},
		{"invalid UTF-8 type", "GPU-a,1,2,3,\xff,0,true:", []string{"device 0, field 4 (type)", "not valid UTF-8"}},
		{"empty id", ",1,2,3,T,0,true:", []string{"device 0, field 0 (id)", "is empty"}},
		{"negative count", "GPU-a,-1,2,3,T,0,true:", []string{"field 1 (count)", "is negative"}},
		{"negative devmem", "GPU-a,1,-2,3,T,0,true:", []string{"field 2 (devmem)", "is negative"}},
		{"negative devcore", "GPU-a,1,2,-3,T,0,true:", []string{"field 3 (devcore)", "is negative"}},
		{"json syntax", `[{"id":"GPU-a",}]`, []string{"offset 15", "invalid character"}},
		{"json offset counts leading blanks", `  [{"id":"GPU-a",}]`, []string{"offset 17"}},
		{"json truncated", `[{"id":"GPU-a"`, []string{"offset", "end of JSON input"}},
		{"json trailing data", `[{"id":"GPU-a"}] x`, []string{"offset", "after top-level value"}},
		{"json wrong type", `[{"id":"GPU-a","devmem":"lots"}]`, []string{"offset", "devmem"}},
		{"json float", `[{"id":"GPU-a","count":1.5}]`, []string{"offset", "count"}},
		{"json empty id", `[{"id":"GPU-a"},{"count":1}]`, []string{"device 1, field id", "is empty"}},
		{"json null element", `[null]`, []string{"device 0, field id"}},
		{"json negative devmem", `[{"id":"GPU-a","devmem":-5}]`, []string{"device 0, field devmem", `"-5" is negative`}},
		{"json negative count", `[{"id":"GPU-a","count":-1}]`, []string{"device 0, field count"}},
		{"json negative devcore", `[{"id":"GPU-a","devcore":-1}]`, []string{"device 0, field devcore"}},
		{"json object not array", `{"id":"GPU-a"}`, []string{"device 0", "fields"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNodeRegister(tt.value)
			if err == nil {
				t.Fatalf("no error, got %+v", got)
			}
			checkErr(t, err, NodeRegisterAnnotation, tt.want...)
		})
	}
}

func TestNodeRegisterRoundTrip(t *testing.T) {
	gi := []DeviceInfo{
		{ID: "GPU-a", Index: 0, Count: 10, Devmem: 15360, Devcore: 100, Type: "NVIDIA-Tesla T4", Numa: 0, Mode: "hami-core", Health: true},
		{ID: "GPU-b", Index: 1, Count: 10, Devmem: 30720, Devcore: 200, Type: "NVIDIA-Tesla T4", Numa: 1, Mode: "mps", Health: false},
	}
	withMig := append([]DeviceInfo{{ID: "GPU-m", Index: 2, Count: 7, Devmem: 81920, Devcore: 100, Type: "NVIDIA A100", Mode: "mig", Health: true,
		MigProfiles: []MigProfile{{Name: "1g.10gb", MemoryMB: 9856, Core: 15, SliceCount: 1, Placements: []MigPlacement{{0, 1}, {6, 1}}}}}}, gi...)

	for _, devs := range [][]DeviceInfo{nil, gi, withMig} {
		s := FormatNodeRegister(devs)
		got, err := ParseNodeRegister(s)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		if !reflect.DeepEqual(got, devs) {
			t.Errorf("JSON round trip of %q\ngot  %+v\nwant %+v", s, got, devs)
		}
	}

	s := FormatNodeRegisterLegacy(gi)
	if want := "GPU-a,10,15360,100,NVIDIA-Tesla T4,0,true,0,hami-core:GPU-b,10,30720,200,NVIDIA-Tesla T4,1,false,1,mps:"; s != want {
		t.Errorf("legacy format\ngot  %s\nwant %s", s, want)
	}
	got, err := ParseNodeRegister(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	if !reflect.DeepEqual(got, gi) {
		t.Errorf("legacy round trip\ngot  %+v\nwant %+v", got, gi)
	}
}

func TestFormatNodeRegister(t *testing.T) {
	tests := []struct {
		name string
		devs []DeviceInfo
		want string
		fn   func([]DeviceInfo) string
	}{
		{"json nil", nil, "[]", FormatNodeRegister},
		// Zero fields are absent, as HAMi's omitempty writes them: health false and numa 0 do not appear.
		{"json omitempty", []DeviceInfo{{ID: "GPU-a", Count: 10}}, `[{"id":"GPU-a","count":10}]`, FormatNodeRegister},
		{"legacy nil", nil, "", FormatNodeRegisterLegacy},
		{"legacy empty mode", []DeviceInfo{{ID: "GPU-a", Count: 1, Type: "T"}}, "GPU-a,1,0,0,T,0,false,0,hami-core:", FormatNodeRegisterLegacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fn(tt.devs); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseNodeRegisterRefusesValuesNoGPUHas(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"GPU-0,10,4611686018427387904,100,NVIDIA,0,true:", "devmem"},
		{"GPU-0,10,81920,2000000,NVIDIA,0,true:", "devcore"},
		{"GPU-0,2000000,81920,100,NVIDIA,0,true:", "count"},
		{`[{"id":"GPU-0","count":10,"devmem":4611686018427387904,"devcore":100,"type":"NVIDIA","health":true}]`, "devmem"},
	} {
		_, err := ParseNodeRegister(tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("%s: error %v, want one naming %s as too large", tc.value, err, tc.want)
		}
	}
}
