package codec

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// The device-list reader before it cut entries in place (strings.Split per entry, device and field): the
// reference the one-pass reader must agree with, values and errors alike.
func parsePodDevicesSplit(key, value string) (PodDevices, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, nil
	}
	entries := strings.Split(value, ";")
	if entries[len(entries)-1] == "" {
		entries = entries[:len(entries)-1]
	}
	pd := make(PodDevices, 0, len(entries))
	for ci, entry := range entries {
		cd, err := splitContainerDevices(key, ci, entry)
		if err != nil {
			return nil, err
		}
		pd = append(pd, cd)
	}
	return pd, nil
}

// parseContainerDevices reads one ';'-separated entry; ci is its 0-based container position.
func splitContainerDevices(key string, ci int, entry string) (ContainerDevices, error) {
	var cd ContainerDevices
	di := 0
	for _, seg := range strings.Split(entry, ":") {
		// A ':' ends each device, so empty segments are the normal tail rather than devices.
		if strings.TrimSpace(seg) == "" {
			continue
		}
		d, ok, err := splitContainerDevice(key, ci, di, seg)
		di++
		if err != nil {
			return nil, err
		}
		if ok {
			cd = append(cd, d)
		}
	}
	return cd, nil
}

// parseContainerDevice reads `UUID,Vendor,<MiB>,<cores>`; ok is false for an empty placeholder device.
func splitContainerDevice(key string, ci, di int, seg string) (ContainerDevice, bool, error) {
	f := strings.Split(seg, ",")
	if len(f) < 4 {
		return ContainerDevice{}, false, &Error{Key: key, Pos: fmt.Sprintf("container %d, device %d", ci, di), Value: seg,
			Msg: fmt.Sprintf("has %d fields, want 4 (uuid,vendor,memory,cores)", len(f))}
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	uuid := stripMigSuffix(f[0])
	if uuid == "" {
		return ContainerDevice{}, false, nil
	}
	fieldErr := func(i int, msg string) error {
		return &Error{Key: key, Pos: fmt.Sprintf("container %d, device %d, field %d (%s)", ci, di, i, podDeviceFields[i]), Value: f[i], Msg: msg}
	}
	num := func(i int, limit int64) (int64, error) {
		v, err := strconv.ParseInt(f[i], 10, 64)
		switch {
		case err != nil && f[i] == "":
			return 0, fieldErr(i, "is empty, want an integer")
		case err != nil:
			return 0, fieldErr(i, "is not an integer")
		case v < 0:
			return 0, fieldErr(i, "is negative")
		case v > limit:
			return 0, fieldErr(i, fmt.Sprintf("is larger than %d, more than any GPU has", limit))
		}
		return v, nil
	}
	mem, err := num(2, MaxMemMiB)
	if err != nil {
		return ContainerDevice{}, false, err
	}
	cores, err := num(3, MaxCores)
	if err != nil {
		return ContainerDevice{}, false, err
	}
	return ContainerDevice{UUID: uuid, Type: f[1], UsedMem: mem, UsedCores: cores}, true, nil
}

func samePodDevices(t *testing.T, in string) {
	t.Helper()
	got, gerr := ParsePodDevices("k", in)
	want, werr := parsePodDevicesSplit("k", in)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%q: error %v, the split reader's %v", in, gerr, werr)
	}
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		t.Fatalf("%q: %#v, the split reader's %#v", in, got, want)
	}
}

func TestPodDevicesAsSplitReader(t *testing.T) {
	for _, in := range []string{"", ";", ";;", " ; ", "GPU-a,NVIDIA,3072,10:;", "GPU-a,NVIDIA,3072,10:GPU-b,NVIDIA,1,2:;;GPU-c,NVIDIA,0,0",
		";GPU-a,NVIDIA,1,1:", ",,0,0:;", "GPU-a[1-2],NVIDIA,1,1:", "GPU-a,NVIDIA,1:", "GPU-a,NVIDIA,1,2,extra,more:", " GPU-a , NVIDIA , 1 , 2 :",
		"GPU-a,NVIDIA,x,1:", "GPU-a,NVIDIA,,1:", "GPU-a,NVIDIA,-1,1:", "GPU-a,NVIDIA,1,1000000:", "::;::", "a,b,c:", "a,b,1,1;b,c,2,2;", "a,b,1,1:::b,c,2,2:"} {
		samePodDevices(t, in)
	}
}

func FuzzPodDevicesAsSplitReader(f *testing.F) {
	for _, s := range []string{"GPU-a,NVIDIA,3072,10:;", ";GPU-a,NVIDIA,1,1:GPU-b,X,2,2:;", ",,0,0:;;", "GPU-a[0-1],N,1,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) { samePodDevices(t, in) })
}
