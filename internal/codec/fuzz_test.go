package codec_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// checkFuzzErr fails unless err is a *codec.Error whose message starts with key.
func checkFuzzErr(t *testing.T, key string, err error) {
	t.Helper()
	var ce *codec.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *codec.Error", err, err)
	}
	if _, ok := err.(*codec.Error); !ok { //nolint:errorlint // the error must BE a *codec.Error, not wrap one
		t.Fatalf("error %T wraps a *codec.Error instead of being one", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, key+": ") {
		t.Fatalf("message %q does not start with %q", msg, key)
	}
}

func FuzzParseNodeRegister(f *testing.F) {
	for _, s := range []string{
		"GPU-a,10,15360,100,NVIDIA-Tesla T4,0,true:",
		"GPU-a,10,15360,100,NVIDIA-Tesla T4,0,true:GPU-b,10,15360,100,NVIDIA-Tesla T4,-1,false:",
		"GPU-a,10,81920,100,NVIDIA-NVIDIA A100-SXM4-80GB,1,true,0,hami-core:GPU-b,10,81920,100,NVIDIA-NVIDIA A100-SXM4-80GB,1,true,1,mps:",
		"::GPU-a,1,2,3,T,0,1:: :",
		`[{"id":"GPU-a","index":1,"count":10,"devmem":24576,"devcore":100,"type":"NVIDIA A10","numa":1,"mode":"hami-core","health":true}]`,
		`[{"id":"GPU-a","count":10,"devmem":24576,"devcore":100,"type":"NVIDIA A10","numa":-1}]`,
		`[{"id":"GPU-a","count":7,"mode":"mig","health":true,"migProfiles":[{"name":"1g.10gb","memoryMB":9856,"core":15,"sliceCount":1,"placements":[{"start":0,"size":1}]},{"name":"x","placements":[]}]}]`,
		"[]", ":", "", " ", "[", "[null]", `{"id":"a"}`, `[{"id":"a","count":1.5}]`, `[{"id":""}]`, `[{"id":"a"}] x`,
		"GPU-a,1,2,3,T:", "GPU-a,1,12x,3,T,0,true:", "GPU-a,1,2,3,T,0,yes:", ",1,2,3,T,0,true:", "GPU-a,-1,2,3,T,0,true:",
		"GPU-a,99999999999,2,3,T,0,true:", "GPU-a,1,2,3,T,0,true,-1,mig:", "\xff,1,2,3,\xfe,0,true:",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		devs, err := codec.ParseNodeRegister(s)
		if err != nil {
			checkFuzzErr(t, codec.NodeRegisterAnnotation, err)
			return
		}
		out := codec.FormatNodeRegister(devs)
		again, err := codec.ParseNodeRegister(out)
		if err != nil {
			t.Fatalf("JSON %q of %q does not parse: %v", out, s, err)
		}
		if !reflect.DeepEqual(again, devs) {
			t.Fatalf("JSON round trip of %q via %q\ngot  %+v\nwant %+v", s, out, again, devs)
		}
		if !legacyWritable(devs) {
			return
		}
		want := make([]codec.DeviceInfo, len(devs))
		for i, d := range devs {
			if d.Mode == "" {
				d.Mode = codec.DefaultMode
			}
			want[i] = d
		}
		out = codec.FormatNodeRegisterLegacy(devs)
		again, err = codec.ParseNodeRegister(out)
		if len(devs) == 0 {
			// The legacy form of no devices is "", which is the empty-value error.
			if err == nil {
				t.Fatalf("legacy form %q of no devices parsed", out)
			}
			return
		}
		if err != nil {
			t.Fatalf("legacy %q of %q does not parse: %v", out, s, err)
		}
		if !reflect.DeepEqual(again, want) {
			t.Fatalf("legacy round trip of %q via %q\ngot  %+v\nwant %+v", s, out, again, want)
		}
	})
}

// legacyWritable reports whether devs fit the text form: no MIG profiles, no separators in strings, no
// blanks at string ends (the reader trims the whole value) and no id that would make the value look like JSON.
func legacyWritable(devs []codec.DeviceInfo) bool {
	for _, d := range devs {
		if d.MigProfiles != nil || strings.HasPrefix(d.ID, "[") {
			return false
		}
		for _, s := range []string{d.ID, d.Type, d.Mode} {
			if strings.ContainsAny(s, ",:") || strings.TrimSpace(s) != s {
				return false
			}
		}
	}
	return true
}

func FuzzParsePodDevices(f *testing.F) {
	for _, s := range []string{
		"GPU-a,NVIDIA,4096,0:;",
		"GPU-a,NVIDIA,2500,25:GPU-b,NVIDIA,2500,25:;",
		";GPU-a,NVIDIA,4096,0:;",
		";GPU-a,NVIDIA,4096,0:;;",
		",,0,0:;GPU-a,NVIDIA,4096,0:;",
		"GPU-a[1-2],NVIDIA,4096,0:;",
		"GPU-a[1-2][3-4],NVIDIA,4096,0:;",
		"GPU-a,NVIDIA,4096,0:",
		"GPU-a,NVIDIA,4096,0",
		"GPU-a,NVIDIA,4096,0,extra:;",
		";", ";;", "", " ", ":", ":;:",
		"GPU-a,NVIDIA,4096:;", "GPU-a:;", "GPU-a,NVIDIA,4k,0:;", "GPU-a,NVIDIA,-1,0:;", "GPU-a,NVIDIA,1,:;",
		"GPU-a,NVIDIA,99999999999999999999,0:;", "[1-2],NVIDIA,1,1:;", " GPU-a , NVIDIA , 1 , 1 ;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pd, err := codec.ParsePodDevices(codec.PodAllocatedAnnotation, s)
		if err != nil {
			checkFuzzErr(t, codec.PodAllocatedAnnotation, err)
			return
		}
		out := codec.FormatPodDevices(pd)
		again, err := codec.ParsePodDevices(codec.PodAllocatedAnnotation, out)
		if err != nil {
			t.Fatalf("%q of %q does not parse: %v", out, s, err)
		}
		if !reflect.DeepEqual(again, pd) {
			t.Fatalf("round trip of %q via %q\ngot  %#v\nwant %#v", s, out, again, pd)
		}
	})
}

// sameTime is time equality that also keeps the zone offset, without comparing *time.Location pointers.
func sameTime(a, b time.Time) bool {
	_, ao := a.Zone()
	_, bo := b.Zone()
	return a.Equal(b) && ao == bo
}

func FuzzParseNodeLock(f *testing.F) {
	for _, s := range []string{
		"2026-08-01T10:00:00Z,team-a,train-0",
		"2026-08-01T10:00:00+08:00,ns,p",
		"2026-08-01T10:00:00.123456789-07:00,ns,p",
		"2026-08-01T10:00:00Z",
		"2026-08-01T10:00:00Z,,",
		"", " ", "yesterday,ns,p", "2026-08-01 10:00:00", "2026-08-01T10:00:00Z,ns", "2026-08-01T10:00:00Z,ns,p,x",
		"2026-13-01T10:00:00Z,ns,p", "2026-08-01T10:00:00+24:00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := codec.ParseNodeLock(s)
		if err != nil {
			checkFuzzErr(t, codec.NodeLockAnnotation, err)
			return
		}
		out := codec.FormatNodeLock(l)
		again, err := codec.ParseNodeLock(out)
		if err != nil {
			t.Fatalf("%q of %q does not parse: %v", out, s, err)
		}
		if !sameTime(again.Time, l.Time) || again.Namespace != l.Namespace || again.Pod != l.Pod {
			t.Fatalf("round trip of %q via %q: got %+v, want %+v", s, out, again, l)
		}
	})
}

func FuzzParseHandshake(f *testing.F) {
	for _, s := range []string{
		"Requesting_2026-08-01 10:11:12",
		"Deleted_2026-08-01 10:11:12",
		"Reported 2024-03-05 06:07:08.123456789 +0000 UTC m=+12.345678901",
		"Reported 2024-03-05 06:07:08 +0200 EET",
		"Reported", "Reported sometime", "",
		"Ready", "Requesting_now", "Requesting_2026-08-01T10:11:12Z", "Requesting_2026-08-01 10:11:12.5", "Deleted_",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := codec.ParseHandshake(s)
		if err != nil {
			checkFuzzErr(t, codec.NodeHandshakeAnnotation, err)
			return
		}
		if h.State != codec.HandshakeRequesting {
			return
		}
		out := codec.FormatHandshakeRequesting(h.Time)
		again, err := codec.ParseHandshake(out)
		if err != nil {
			t.Fatalf("%q of %q does not parse: %v", out, s, err)
		}
		// The stamp has second precision; anything finer in the input is not written back.
		if again.State != h.State || !again.Time.Equal(h.Time.Truncate(time.Second)) {
			t.Fatalf("round trip of %q via %q: got %+v, want %+v", s, out, again, h)
		}
	})
}

func FuzzParsePairScores(f *testing.F) {
	for _, s := range []string{
		`[{"uuid":"GPU-a","score":{"GPU-b":160}},{"uuid":"GPU-b","score":{"GPU-a":160}}]`,
		`[{"uuid":"GPU-a","score":{}}]`,
		`[{"uuid":"GPU-a"},{"score":{"":1}}]`,
		"[]", "", "null", `{"uuid":"a"}`, `[{"uuid":"a","score":{"b":1.5}}]`, `[{"uuid":"a","score":{"b":}}]`, "[null]",
		`[{"uuid":"a","score":{"b":1,"b":2}}]`, "[\"\xff\"]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := codec.ParsePairScores(s)
		if err != nil {
			checkFuzzErr(t, codec.NodePairScoreAnnotation, err)
			return
		}
		out := codec.FormatPairScores(ps)
		again, err := codec.ParsePairScores(out)
		if err != nil {
			t.Fatalf("%q of %q does not parse: %v", out, s, err)
		}
		if !reflect.DeepEqual(again, ps) {
			t.Fatalf("round trip of %q via %q\ngot  %+v\nwant %+v", s, out, again, ps)
		}
	})
}

func FuzzParseMigAllocations(f *testing.F) {
	for _, s := range []string{
		`[{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.10gb","placement":{"start":2,"size":1}}]`,
		`[{"containerIndex":1,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"3g.40gb","placement":{"start":4,"size":4},"migUUID":"MIG-x","gpuInstanceID":1,"computeInstanceID":0}]`,
		`[{"gpuUUID":"GPU-a","placement":{"start":0,"size":1},"gpuInstanceID":null}]`,
		"[]", "", "[null]", `{"gpuUUID":"a"}`, `[{"gpuUUID":"","placement":{"start":0,"size":1}}]`,
		`[{"gpuUUID":"a","placement":{"start":-1,"size":1}}]`, `[{"gpuUUID":"a","placement":{"start":0,"size":0}}]`,
		`[{"gpuUUID":"a","gpuInstanceID":-1,"placement":{"start":0,"size":1}}]`, `[{"gpuUUID":"a","placement":{"start":0,"size":1}},]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		as, err := codec.ParseMigAllocations(s)
		if err != nil {
			checkFuzzErr(t, codec.PodMigAllocationsAnnotation, err)
			return
		}
		out := codec.FormatMigAllocations(as)
		again, err := codec.ParseMigAllocations(out)
		if err != nil {
			t.Fatalf("%q of %q does not parse: %v", out, s, err)
		}
		if !reflect.DeepEqual(again, as) {
			t.Fatalf("round trip of %q via %q\ngot  %+v\nwant %+v", s, out, again, as)
		}
	})
}

func FuzzParseCordon(f *testing.F) {
	for _, s := range []string{"GPU-a", "GPU-b, GPU-a ,,GPU-b,", "", " , ", "\xff,a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		uuids := codec.ParseCordon(s)
		if again := codec.ParseCordon(codec.FormatCordon(uuids)); !reflect.DeepEqual(again, uuids) {
			t.Fatalf("round trip of %q: got %q, want %q", s, again, uuids)
		}
	})
}

// FuzzParseDeviceRegister: every family's register annotation (Hygon, Ascend ...) reads as NVIDIA's does, with
// its own key in errors, and round-trips through the JSON writer. HAMi's other device plugins add fields
// kubectl-hami does not use (devicevendor, customInfo but its NetworkID), which are ignored; the writer writes
// no customInfo (kubectl-hami's agent registers NVIDIA GPUs), so NetworkID is left out of the round trip.
func FuzzParseDeviceRegister(f *testing.F) {
	const key = "hami.io/node-register-Ascend910B3"
	for _, s := range []string{
		`[{"id":"DCU-0","count":4,"devmem":32768,"devcore":100,"type":"DCU-Z100","numa":0,"health":true}]`,
		`[{"id":"Ascend910B3-0","index":0,"count":4,"devmem":65536,"devcore":20,"type":"Ascend910B3","health":true,"customInfo":{"NetworkID":1}}]`,
		`[{"id":"a","devicevendor":"Ascend910C","index":3,"health":true}]`,
		`[{"id":"a","customInfo":null}]`, `[{"id":"a","customInfo":[1,2]}]`, `[{"id":"a","index":-1}]`, "[", "", "x:",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		devs, err := codec.ParseDeviceRegister(key, s)
		if err != nil {
			checkFuzzErr(t, key, err)
			return
		}
		again, err := codec.ParseDeviceRegister(key, codec.FormatNodeRegister(devs))
		if err != nil {
			t.Fatalf("JSON of %q does not parse: %v", s, err)
		}
		for i := range devs {
			devs[i].NetworkID = nil
		}
		if !reflect.DeepEqual(again, devs) {
			t.Fatalf("JSON round trip of %q\ngot  %+v\nwant %+v", s, again, devs)
		}
	})
}
