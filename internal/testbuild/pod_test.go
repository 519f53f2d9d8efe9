package testbuild

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestMakePod(t *testing.T) {
	p := MakePod("ns", "p").GPUs(2).GPUMem(1000).Annotation("a", "b").
		InitContainer("init").GPUs(1).GPUCores(100).
		Container("side").Limit("cpu", 1).Node("n1").Obj()
	if len(p.Spec.Containers) != 2 || p.Spec.Containers[0].Name != "main" || p.Spec.Containers[1].Name != "side" {
		t.Fatalf("containers %+v", p.Spec.Containers)
	}
	main := p.Spec.Containers[0].Resources.Limits
	if g, m := main[ResourceGPU], main[ResourceGPUMem]; g.Value() != 2 || m.Value() != 1000 || len(main) != 2 {
		t.Errorf("main's limits %v", main)
	}
	init := p.Spec.InitContainers
	if len(init) != 1 || len(init[0].Resources.Limits) != 2 {
		t.Errorf("init containers %+v", init)
	}
	if p.Annotations["a"] != "b" || p.Spec.NodeName != "n1" || p.Status.Phase != corev1.PodRunning {
		t.Errorf("pod %+v", p)
	}
	c := MakeContainer("c").GPUs(1).GPUMemPercent(50).Obj()
	if len(c.Resources.Limits) != 2 {
		t.Errorf("container %+v", c)
	}
	// Obj is a copy: building on does not change what was returned.
	w := MakePod("ns", "q").GPUs(1)
	first := w.Obj()
	w.GPUs(4)
	if q := first.Spec.Containers[0].Resources.Limits[ResourceGPU]; q.Value() != 1 {
		t.Errorf("Obj shares state with the builder: %v", q.Value())
	}
}
