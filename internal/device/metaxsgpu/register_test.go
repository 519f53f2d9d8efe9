package metaxsgpu

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzParseRegister: whatever the sGPU plugin's annotation says, ParseRegister does not panic, its errors name
// the annotation, and what it reads survives FormatRegister unchanged.
func FuzzParseRegister(f *testing.F) {
	for _, s := range []string{
		`[{"uuid": "GPU-123", "model": "sgpu", "totalDevCount": 16, "totalCompute": 100, "bdf": "0000:44:00.0", "totalVRam" : 32768, "numa": 1, "healthy": true, "qosPolicy": "fixed-share"}]`,
		`[{"uuid":"a"},{"uuid":"b","linkZone":2,"availableVRam":5}]`, `[null]`, `[{"uuid":"a","totalVRam":-1}]`,
		`[{"uuid":"a","numa":2147483648}]`, `[] []`, "[]", "", "[", `{"uuid":"a"}`, "\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		devs, err := ParseRegister(RegisterAnnotation, s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), RegisterAnnotation+": ") {
				t.Fatalf("error does not name the annotation: %v", err)
			}
			return
		}
		if len(devs) == 0 {
			t.Fatalf("%q: no error and no devices", s)
		}
		again, err := ParseRegister(RegisterAnnotation, FormatRegister(devs))
		if err != nil {
			t.Fatalf("FormatRegister of %q does not parse: %v", s, err)
		}
		if !reflect.DeepEqual(again, devs) {
			t.Fatalf("round trip of %q\ngot  %+v\nwant %+v", s, again, devs)
		}
	})
}

func TestParseRegister(t *testing.T) {
	devs, err := ParseRegister(RegisterAnnotation, `[{"uuid":"a","totalDevCount":16,"totalCompute":100,"totalVRam":32768,"numa":1,"healthy":true,"qosPolicy":"burst-share"},{"uuid":"b"}]`)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 2 || devs[0].ID != "a" || devs[0].Index != 0 || devs[0].Count != 16 || devs[0].Devmem != 32768 || devs[0].Devcore != 100 ||
		devs[0].Numa != 1 || !devs[0].Health || devs[0].Type != Name || devs[1].ID != "b" || devs[1].Index != 1 || devs[1].Health {
		t.Errorf("devices %+v", devs)
	}
	for in, want := range map[string]string{
		"":                                "not a JSON list",
		"[]":                              "no sGPU registered",
		`[{"uuid":"a"}] x`:                "text after",
		`[{"uuid":"a","totalVRam":-1}]`:   "entry 0 (a): totalVRam -1 is out of range",
		`[{"uuid":"a"},{"bdf":"0000:1"}]`: "entry 1: no uuid",
	} {
		if _, err := ParseRegister(RegisterAnnotation, in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

// TestKinds: the chart's resource names, and the section's names when set.
func TestKinds(t *testing.T) {
	ks, err := Family{}.Kinds(nil)
	if err != nil || len(ks) != 1 {
		t.Fatalf("kinds %v, %v", ks, err)
	}
	if got := strings.Join(ks[0].Resources(), " "); got != "metax-tech.com/sgpu metax-tech.com/vmemory metax-tech.com/vcore" {
		t.Errorf("resources %q", got)
	}
	ks, err = Family{}.Kinds([]byte(`{"resourceVCountName":"x/sgpu","resourceVCoreName":"x/vcore","resourceVMemoryName":"x/vmem"}`))
	if err != nil || strings.Join(ks[0].Resources(), " ") != "x/sgpu x/vmem x/vcore" {
		t.Errorf("kinds %v, %v", ks, err)
	}
}
