package lint

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

func TestLintGPUsHeldUnbound(t *testing.T) {
	placed := func(name, nodeName, phase string) any {
		ann := map[string]string{codec.PodNodeAnnotation: "gpu-0", codec.PodAllocatedAnnotation: "GPU-0,NVIDIA,1000,0:;"}
		if phase != "" {
			ann[codec.PodBindPhaseAnnotation] = phase
		}
		p := pod("ns", name, ann, gpu1, nodeName)
		p.Spec.SchedulerName = "no-such-scheduler"
		return p
	}
	field := "metadata.annotations[hami.io/vgpu-node]"
	testCheck(t, "gpus-held-unbound", []lintCase{
		{"never bound", snap(placed("p", "", "")), nil, []want{{Warning, "Pod ns/p", field,
			`holds GPUs on node gpu-0 (hami.io/vgpu-node) but is bound to no node (hami.io/bind-phase "", scheduler "no-such-scheduler"); HAMi counts`,
			"kubectl -n ns annotate pod p hami.io/vgpu-node- hami.io/vgpu-devices-allocated- hami.io/vgpu-devices-to-allocate-"}}},
		{"bound elsewhere", snap(placed("p", "gpu-1", "success")), nil, []want{{Error, "Pod ns/p", field, "but is bound to node gpu-1", "placement-policy.yaml"}}},
		{"bound where it says, or binding", snap(placed("a", "gpu-0", "success"), placed("b", "", "allocating")), nil, nil},
	})
}
