package engine

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

func TestParseRequestDerivation(t *testing.T) {
	cases := []struct {
		name string
		cfg  func(*Config)
		c    corev1.Container
		want *ContainerRequest // nil: the container asks for nothing
	}{
		{name: "no gpu count asks for nothing", c: tb.MakeContainer("c").GPUMem(4000).GPUCores(30).Obj(), want: nil},
		{name: "zero gpu count asks for nothing", c: tb.MakeContainer("c").GPUs(0).GPUMem(4000).GPUCores(30).Obj(), want: nil},
		{name: "count only: 100% of each GPU", c: tb.MakeContainer("c").GPUs(2).Obj(),
			want: &ContainerRequest{Name: "c", Count: 2, MemoryPercent: 100, MemoryDefaulted: true}},
		{name: "gpumem beats percentage", c: tb.MakeContainer("c").GPUs(1).GPUMem(4000).GPUMemPercent(50).Obj(), want: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 4000}},
		{name: "percentage", c: tb.MakeContainer("c").GPUs(1).GPUMemPercent(25).GPUCores(10).Obj(), want: &ContainerRequest{Name: "c", Count: 1, MemoryPercent: 25, Cores: 10}},
		{name: "percentage above 100 clamps", c: tb.MakeContainer("c").GPUs(1).GPUMemPercent(150).Obj(), want: &ContainerRequest{Name: "c", Count: 1, MemoryPercent: 100}},
		{name: "cores above 100 clamp", c: tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(250).Obj(), want: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 1000, Cores: 100}},
		{name: "defaultMemory", cfg: func(c *Config) { c.DefaultMemory = 2048 }, c: tb.MakeContainer("c").GPUs(1).Obj(),
			want: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 2048, MemoryDefaulted: true}},
		{name: "defaultCores", cfg: func(c *Config) { c.DefaultCores = 20 }, c: tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj(),
			want: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 1000, Cores: 20}},
		{name: "memoryFactor multiplies MiB", cfg: func(c *Config) { c.MemoryFactor = 4 }, c: tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj(),
			want: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 4000}},
		{name: "renamed resources", cfg: func(c *Config) { c.ResourceCountName, c.ResourceMemoryName = "example.com/vgpu", "example.com/vmem" },
			c: corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				"example.com/vgpu": resource.MustParse("1"), "example.com/vmem": resource.MustParse("3000")}}},
			want: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 3000}},
		{name: "requests used when limits are absent", c: corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			"nvidia.com/gpu": resource.MustParse("1"), "nvidia.com/gpumem": resource.MustParse("1500")}}},
			want: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 1500}},
		{name: "limits beat requests", c: corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"), "nvidia.com/gpumem": resource.MustParse("1500")},
			Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"), "nvidia.com/gpumem": resource.MustParse("900")}}},
			want: &ContainerRequest{Name: "c", Count: 1, MemoryMiB: 1500}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			pr, _ := ParseRequest(mkPod("ns", "p", tc.c), cfg)
			if tc.want == nil {
				if pr.WantsGPU() {
					t.Fatalf("asks for %+v, want nothing", pr.Containers)
				}
				return
			}
			if len(pr.Containers) != 1 || !reflect.DeepEqual(pr.Containers[0], *tc.want) {
				t.Fatalf("got %+v, want %+v", pr.Containers, *tc.want)
			}
		})
	}
}

func TestParseRequestInitContainersAndTotals(t *testing.T) {
	p := mkPod("ns", "p", tb.MakeContainer("app").GPUs(2).GPUMem(1000).Obj(), tb.MakeContainer("side").Obj())
	p.Spec.InitContainers = []corev1.Container{tb.MakeContainer("init").GPUs(3).GPUMem(500).Obj()}
	pr, _ := ParseRequest(p, DefaultConfig())
	if pr.InitContainers != 1 || pr.AppContainers != 2 {
		t.Fatalf("containers init=%d app=%d", pr.InitContainers, pr.AppContainers)
	}
	if len(pr.Containers) != 2 || !pr.Containers[0].Init || pr.Containers[0].Name != "init" || pr.Containers[1].Name != "app" {
		t.Fatalf("containers %+v: want init first, then app, non-GPU containers left out", pr.Containers)
	}
	if got := pr.TotalGPUs(); got != 3 {
		t.Errorf("TotalGPUs = %d, want 3 (the init peak beats the app sum of 2)", got)
	}
}

func TestParseRequestAnnotations(t *testing.T) {
	p := withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()),
		AnnoUseGPUType, "A100, H100", AnnoNoUseGPUType, "MIG", AnnoUseGPUUUID, "GPU-a,GPU-b", AnnoNoUseGPUUUID, "GPU-c",
		AnnoNumaBind, "true", AnnoVGPUMode, "hami-core", AnnoGPUPolicy, "topology-aware,binpack", AnnoNodePolicy, "spread",
		AnnoDeviceScoreWeight, "slot=2,core=0,memory=3")
	pr, probs := ParseRequest(p, DefaultConfig())
	if len(probs) != 0 {
		t.Fatalf("problems %v", probs)
	}
	want := &PodRequest{Namespace: "ns", Name: "p", Containers: pr.Containers, AppContainers: 1,
		UseTypes: []string{"A100", "H100"}, NoUseTypes: []string{"MIG"}, UseUUIDs: []string{"GPU-a", "GPU-b"}, NoUseUUIDs: []string{"GPU-c"},
		NumaBind: true, Mode: "hami-core", GPUPolicy: "binpack", TopologyAware: true, NodePolicy: "spread", Weights: Weights{Slot: 2, Core: 0, Memory: 3},
		sortPolicy: "topology-aware,binpack", numaBindAnno: true, annos: p.Annotations}
	if !reflect.DeepEqual(pr, want) {
		t.Fatalf("got %+v\nwant %+v", pr, want)
	}
}

func TestParseRequestProblemsNameTheField(t *testing.T) {
	p := withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMemPercent(300).Obj()), AnnoNumaBind, "maybe", AnnoGPUPolicy, "fastest",
		AnnoDeviceScoreWeight, "slot=x", AnnoNodePolicy, "random")
	pr, probs := ParseRequest(p, DefaultConfig())
	wantFields := []string{"spec.containers[c].resources[nvidia.com/gpumem-percentage]", AnnoNumaBind, AnnoGPUPolicy, AnnoNodePolicy, AnnoDeviceScoreWeight}
	for _, f := range wantFields {
		found := false
		for _, pb := range probs {
			if strings.Contains(pb.Field, f) && pb.Object == "ns/p" && pb.Kind == "Pod" {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem names %s; got %v", f, probs)
		}
	}
	// The pod is still evaluated with HAMi's fallbacks.
	if pr.Containers[0].MemoryPercent != 100 || pr.NumaBind || pr.NodePolicy != PolicyBinpack || pr.Weights != (Weights{1, 1, 1}) {
		t.Errorf("fallbacks not applied: %+v", pr)
	}
}
