package codec

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePodDevices(t *testing.T) {
	a := ContainerDevice{UUID: "GPU-a", Type: "NVIDIA", UsedMem: 4096, UsedCores: 0}
	a25 := ContainerDevice{UUID: "GPU-a", Type: "NVIDIA", UsedMem: 2500, UsedCores: 25}
	b25 := ContainerDevice{UUID: "GPU-b", Type: "NVIDIA", UsedMem: 2500, UsedCores: 25}
	tests := []struct {
		name  string
		value string
		want  PodDevices
	}{
		{"empty is zero containers", "", nil},
		{"blank is zero containers", " \n", nil},
		{"v2.8 one app container", "GPU-a,NVIDIA,4096,0:;", PodDevices{{a}}},
		{"one container two GPUs", "GPU-a,NVIDIA,2500,25:GPU-b,NVIDIA,2500,25:;", PodDevices{{a25, b25}}},
		{"v2.8 two app containers", "GPU-a,NVIDIA,4096,0:;GPU-b,NVIDIA,2500,25:;", PodDevices{{a}, {b25}}},
		{"v2.9 empty init container first", ";GPU-a,NVIDIA,4096,0:;", PodDevices{nil, {a}}},
		{"v2.9 app container without GPUs", ";GPU-a,NVIDIA,4096,0:;;", PodDevices{nil, {a}, nil}},
		{"lone semicolon", ";", PodDevices{nil}},
		{"two empty containers", ";;", PodDevices{nil, nil}},
		{"old empty slot", ",,0,0:;GPU-a,NVIDIA,4096,0:;", PodDevices{nil, {a}}},
		{"old empty slot beside a device", "GPU-a,NVIDIA,4096,0:,,0,0:;", PodDevices{{a}}},
		{"mig suffix", "GPU-a[1-2],NVIDIA,4096,0:;", PodDevices{{a}}},
		{"mig suffix large numbers", "GPU-a[13-0],NVIDIA,4096,0:;", PodDevices{{a}}},
		{"bracket that is not a mig suffix is kept", "GPU-a[x],NVIDIA,4096,0:;", PodDevices{{{UUID: "GPU-a[x]", Type: "NVIDIA", UsedMem: 4096}}}},
		{"missing trailing semicolon", "GPU-a,NVIDIA,4096,0:", PodDevices{{a}}},
		{"missing trailing colon and semicolon", "GPU-a,NVIDIA,4096,0", PodDevices{{a}}},
		{"missing trailing colon", "GPU-a,NVIDIA,2500,25:GPU-b,NVIDIA,2500,25;", PodDevices{{a25, b25}}},
		{"extra fields ignored", "GPU-a,NVIDIA,4096,0,extra:;", PodDevices{{a}}},
		{"blanks in fields", " GPU-a , NVIDIA , 4096 , 0 :;", PodDevices{{a}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePodDevices(PodAllocatedAnnotation, tt.value)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParsePodDevicesErrors(t *testing.T) {
	tests := []struct {
		name  string
		key   string
		value string
		want  []string
	}{
		{"three fields", PodAllocatedAnnotation, "GPU-a,NVIDIA,4096:;", []string{"container 0, device 0", "has 3 fields"}},
		{"one field second container", PodToAllocateAnnotation, ";GPU-a:;", []string{"container 1, device 0", "has 1 fields"}},
		{"bad memory", PodAllocatedAnnotation, ";GPU-a,NVIDIA,4096,0:GPU-b,NVIDIA,4k,0:;", []string{"container 1, device 1, field 2 (memory)", `"4k" is not an integer`}},
		{"negative memory", PodAllocatedAnnotation, "GPU-a,NVIDIA,-1,0:;", []string{"container 0, device 0, field 2 (memory)", "is negative"}},
		{"bad cores", PodToAllocateAnnotation, "GPU-a,NVIDIA,1,x:;", []string{"field 3 (cores)", `"x" is not an integer`}},
		{"negative cores", PodAllocatedAnnotation, "GPU-a,NVIDIA,1,-5:;", []string{"field 3 (cores)", "is negative"}},
		{"empty cores", PodAllocatedAnnotation, "GPU-a,NVIDIA,1,:;", []string{"field 3 (cores)", "is empty"}},
		{"overflow", PodAllocatedAnnotation, "GPU-a,NVIDIA,99999999999999999999,0:;", []string{"field 2 (memory)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePodDevices(tt.key, tt.value)
			if err == nil {
				t.Fatalf("no error, got %#v", got)
			}
			checkErr(t, err, tt.key, tt.want...)
		})
	}
}

func TestPodDevicesRoundTrip(t *testing.T) {
	a := ContainerDevice{UUID: "GPU-a", Type: "NVIDIA", UsedMem: 4096, UsedCores: 30}
	b := ContainerDevice{UUID: "GPU-b", Type: "NVIDIA", UsedMem: 1, UsedCores: 100}
	tests := []struct {
		pd   PodDevices
		want string
	}{
		{nil, ""},
		{PodDevices{nil}, ";"},
		{PodDevices{{a}}, "GPU-a,NVIDIA,4096,30:;"},
		{PodDevices{nil, {a, b}, nil}, ";GPU-a,NVIDIA,4096,30:GPU-b,NVIDIA,1,100:;;"},
	}
	for _, tt := range tests {
		s := FormatPodDevices(tt.pd)
		if s != tt.want {
			t.Errorf("format %#v: got %q, want %q", tt.pd, s, tt.want)
		}
		got, err := ParsePodDevices(PodAllocatedAnnotation, s)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		if !reflect.DeepEqual(got, tt.pd) {
			t.Errorf("round trip of %q\ngot  %#v\nwant %#v", s, got, tt.pd)
		}
	}
}

func TestParsePodDevicesRefusesValuesNoGPUHas(t *testing.T) {
	for _, tc := range []struct{ value, wantPos string }{
		{"GPU-0,NVIDIA,4611686018427387904,0:;", "field 2 (memory)"},
		{"GPU-0,NVIDIA,1099511627777,0:;", "field 2 (memory)"},
		{"GPU-0,NVIDIA,0,1048577:;", "field 3 (cores)"},
	} {
		_, err := ParsePodDevices(PodAllocatedAnnotation, tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.wantPos) || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("%s: error %v, want one naming %s as too large", tc.value, err, tc.wantPos)
		}
	}
	if _, err := ParsePodDevices(PodAllocatedAnnotation, "GPU-0,NVIDIA,1099511627776,1048576:;"); err != nil {
		t.Errorf("values at the bound refused: %v", err)
	}
}
