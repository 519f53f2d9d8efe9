package deviceplugin

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

func TestTakeNextEntry(t *testing.T) {
	tests := []struct {
		name          string
		value         string
		wantIndex     int
		wantDevices   int
		wantRemaining string
		wantLast      bool
		wantErr       string
	}{
		{name: "one container", value: "GPU-a,NVIDIA,1000,10:;", wantDevices: 1, wantRemaining: ";", wantLast: true},
		{name: "init container first (v2.9+)", value: "GPU-a,NVIDIA,1000,10:;GPU-a,NVIDIA,2000,0:GPU-b,NVIDIA,2000,0:;",
			wantDevices: 1, wantRemaining: ";GPU-a,NVIDIA,2000,0:GPU-b,NVIDIA,2000,0:;"},
		{name: "consumed entries and containers without GPUs are skipped", value: ";;GPU-b,NVIDIA,500,0:;;",
			wantIndex: 2, wantDevices: 1, wantRemaining: ";;;;", wantLast: true},
		{name: "legacy empty placeholder", value: ",,0,0:;GPU-b,NVIDIA,500,0:;", wantIndex: 1, wantDevices: 1, wantRemaining: ";;", wantLast: true},
		{name: "no trailing semicolon", value: "GPU-a,NVIDIA,1,0:", wantDevices: 1, wantRemaining: ";", wantLast: true},
		{name: "already consumed", value: ";;", wantErr: "no container entry left (already consumed"},
		{name: "blank", value: "", wantErr: "no container entry left"},
		{name: "bad memory", value: "GPU-a,NVIDIA,-1,0:;", wantErr: "is negative"},
		{name: "too few fields", value: "GPU-a,NVIDIA:;", wantErr: "want 4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{codec.PodToAllocateAnnotation: tc.value}}}
			got, err := takeNextEntry(pod)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.index != tc.wantIndex || len(got.devices) != tc.wantDevices || got.remaining != tc.wantRemaining || got.last != tc.wantLast {
				t.Errorf("took entry %d (%d GPUs), remaining %q, last %v; want %d (%d), %q, %v",
					got.index, len(got.devices), got.remaining, got.last, tc.wantIndex, tc.wantDevices, tc.wantRemaining, tc.wantLast)
			}
		})
	}
	if _, err := takeNextEntry(&corev1.Pod{}); err == nil || !strings.Contains(err.Error(), "has no "+codec.PodToAllocateAnnotation) {
		t.Errorf("pod without the annotation: %v", err)
	}
}

func TestEntryContainer(t *testing.T) {
	gpu := corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init-gpu", Resources: gpu}, {Name: "init-plain"}},
		Containers:     []corev1.Container{{Name: "app-plain"}, {Name: "app-gpu", Resources: gpu}, {Name: "app-gpu2", Resources: gpu}},
	}}
	entries := func(v string) codec.PodDevices {
		pd, err := codec.ParsePodDevices("test", v)
		if err != nil {
			t.Fatal(err)
		}
		return pd
	}
	tests := []struct {
		name  string
		value string
		index int
		want  string // "" for none
	}{
		{name: "init then app entries (v2.9+)", value: "G,N,1,0:;;;G,N,1,0:;G,N,1,0:;", index: 3, want: "app-gpu"},
		{name: "init entry (v2.9+)", value: "G,N,1,0:;;;G,N,1,0:;G,N,1,0:;", index: 0, want: "init-gpu"},
		{name: "app entries only (up to v2.8)", value: ";G,N,1,0:;G,N,1,0:;", index: 2, want: "app-gpu2"},
		{name: "dropped empty entries (v2.10 #2899): GPU containers in order", value: "G,N,1,0:;G,N,1,0:;G,N,1,0:;", index: 1, want: "app-gpu"},
		{name: "more entries than GPU containers", value: "G,N,1,0:;G,N,1,0:;G,N,1,0:;G,N,1,0:;", index: 3, want: ""},
		{name: "index out of range", value: "G,N,1,0:;", index: 5, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if c := entryContainer(pod, entries(tc.value), tc.index, "nvidia.com/gpu"); c != nil {
				got = c.Name
			}
			if got != tc.want {
				t.Errorf("entry %d of %q: container %q, want %q", tc.index, tc.value, got, tc.want)
			}
		})
	}
}

func TestVirtualDevices(t *testing.T) {
	devs := virtualDevices([]codec.DeviceInfo{
		{ID: "GPU-a", Count: 2, Health: true, Numa: 1},
		{ID: "GPU-b", Count: 1, Health: false},
		{ID: "GPU-c", Count: 0, Health: true},
	})
	want := []string{"GPU-a-0 Healthy 1", "GPU-a-1 Healthy 1", "GPU-b-0 Unhealthy 0"}
	var got []string
	for _, d := range devs {
		got = append(got, d.ID+" "+d.Health+" "+string(rune('0'+numaOf(d))))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("devices %v, want %v", got, want)
	}
	if !sameDevices(devs, virtualDevices([]codec.DeviceInfo{{ID: "GPU-a", Count: 2, Health: true, Numa: 1}, {ID: "GPU-b", Count: 1}})) {
		t.Errorf("equal lists compare different")
	}
	if sameDevices(devs, virtualDevices([]codec.DeviceInfo{{ID: "GPU-a", Count: 2, Health: true, Numa: 1}, {ID: "GPU-b", Count: 1, Health: true}})) {
		t.Errorf("a health change compares equal")
	}
}

type scaling float64

func (scaling) Devices() []codec.DeviceInfo          { return nil }
func (scaling) Subscribe() <-chan []codec.DeviceInfo { return nil }
func (s scaling) MemoryScaling() float64             { return float64(s) }

func TestContainerResponseMounts(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1"}}
	devs := codec.ContainerDevices{{UUID: "GPU-a", UsedMem: 1000, UsedCores: 20}, {UUID: "GPU-b", UsedMem: 1000, UsedCores: 20}}
	tests := []struct {
		name       string
		files      []string // in the HAMi-core folder
		ctr        *corev1.Container
		scaling    float64
		wantMounts []string // container paths
		wantCache  string
		wantOver   bool
	}{
		{name: "HAMi-core installed", files: []string{"libvgpu.so", "ld.so.preload"}, ctr: &corev1.Container{Name: "main"}, scaling: 1,
			wantMounts: []string{"/usr/local/vgpu", "/usr/local/vgpu/libvgpu.so", "/tmp/vgpulock", "/etc/ld.so.preload"},
			wantCache:  "/usr/local/vgpu/uid-1_main.cache"},
		{name: "no ld.so.preload: the library only", files: []string{"libvgpu.so"}, ctr: &corev1.Container{Name: "main"}, scaling: 1,
			wantMounts: []string{"/usr/local/vgpu", "/usr/local/vgpu/libvgpu.so", "/tmp/vgpulock"}, wantCache: "/usr/local/vgpu/uid-1_main.cache"},
		{name: "CUDA_DISABLE_CONTROL: not preloaded", files: []string{"libvgpu.so", "ld.so.preload"}, scaling: 1,
			ctr:        &corev1.Container{Name: "main", Env: []corev1.EnvVar{{Name: "CUDA_DISABLE_CONTROL", Value: "true"}}},
			wantMounts: []string{"/usr/local/vgpu", "/usr/local/vgpu/libvgpu.so", "/tmp/vgpulock"}, wantCache: "/usr/local/vgpu/uid-1_main.cache"},
		{name: "no HAMi-core: no mounts, cache inside the container", files: nil, ctr: &corev1.Container{Name: "main"}, scaling: 1.5,
			wantCache: "/tmp/uid-1_main.cache", wantOver: true},
		{name: "unknown container", files: []string{"libvgpu.so", "ld.so.preload"}, scaling: 1,
			wantMounts: []string{"/usr/local/vgpu", "/usr/local/vgpu/libvgpu.so", "/tmp/vgpulock", "/etc/ld.so.preload"},
			wantCache:  "/usr/local/vgpu/uid-1_entry-3.cache"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			opts := DefaultOptions()
			opts.NodeName, opts.HamiCoreDir = "n", dir
			p := &Plugin{src: scaling(tc.scaling), opts: opts, log: discardLog()}
			resp := p.containerResponse(pod, tc.ctr, 3, devs)
			var got []string
			for _, m := range resp.Mounts {
				got = append(got, m.ContainerPath)
				if !strings.HasPrefix(m.HostPath, dir) {
					t.Errorf("mount %s comes from %s, outside the HAMi-core folder", m.ContainerPath, m.HostPath)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.wantMounts, ",") {
				t.Errorf("mounts %v, want %v", got, tc.wantMounts)
			}
			if resp.Envs[EnvMemorySharedCache] != tc.wantCache {
				t.Errorf("cache %q, want %q", resp.Envs[EnvMemorySharedCache], tc.wantCache)
			}
			if _, over := resp.Envs[EnvOversubscribe]; over != tc.wantOver {
				t.Errorf("%s set: %v, want %v", EnvOversubscribe, over, tc.wantOver)
			}
			if resp.Envs[EnvVisibleDevices] != "GPU-a,GPU-b" || resp.Envs["CUDA_DEVICE_MEMORY_LIMIT_1"] != "1000m" || resp.Envs[EnvSMLimit] != "20" {
				t.Errorf("env %v", resp.Envs)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	good := DefaultOptions()
	good.NodeName = "n"
	if err := good.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	tests := []struct {
		name string
		edit func(*Options)
	}{
		{"no node", func(o *Options) { o.NodeName = "" }},
		{"relative socket folder", func(o *Options) { o.SocketDir = "dp" }},
		{"socket named kubelet.sock", func(o *Options) { o.SocketName = "kubelet.sock" }},
		{"socket name with a slash", func(o *Options) { o.SocketName = "a/b.sock" }},
		{"resource without domain", func(o *Options) { o.ResourceName = "gpu" }},
		{"resource in kubernetes.io", func(o *Options) { o.ResourceName = "kubernetes.io/gpu" }},
		{"relative HAMi-core folder", func(o *Options) { o.HamiCoreDir = "vgpu" }},
		{"zero poll", func(o *Options) { o.PollInterval = 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.edit(&o)
			if err := o.Validate(); err == nil {
				t.Errorf("accepted %+v", o)
			}
		})
	}
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
