package extender_test

import (
	"slices"
	"strings"
	"testing"

	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

// TestForgedPlacementDoesNotFreeAFullGPU is issue 19's forged pod against the extender: a pod that never runs
// claims 3 x 2^62 MiB of a GPU already fully given to a running pod; the GPU must stay full for filter.
func TestForgedPlacementDoesNotFreeAFullGPU(t *testing.T) {
	owner := xtPlaced(xtPod("team", "owner").GPUs(1).GPUMem(81920).Obj(), "full-node", xtDev("full-node", 0, 81920, 0))
	forged := xtPod("attacker", "forged").GPUs(1).Obj()
	forged.Spec.SchedulerName = "no-such-scheduler"
	forged.Annotations[codec.PodNodeAnnotation] = "full-node"
	forged.Annotations[codec.PodAllocatedAnnotation] = strings.Repeat("GPU-full-node-0,NVIDIA,4611686018427387904,0:", 3) + ";"
	e := newXTEnv(t, extender.Options{}, xtNode("full-node", xtGPUs("full-node", 1, 81920, 10)), owner, forged)

	if g := e.gpu("full-node", 0); g.UsedMem != 81920 || g.UsedSlots != 1 {
		t.Fatalf("GPU usage %d MiB, %d slots; want the owner's 81920 MiB and 1 slot", g.UsedMem, g.UsedSlots)
	}
	names := []string{"full-node"}
	var res extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: xtPod("team", "probe").GPUs(1).GPUMem(30000).Obj(), NodeNames: &names}, &res)
	if res.NodeNames != nil && slices.Contains(*res.NodeNames, "full-node") {
		t.Fatalf("filter passes full-node for a 30000 MiB pod: %+v", res)
	}
	if _, ok := res.FailedNodes["full-node"]; !ok {
		t.Fatalf("full-node is not among the failed nodes: %+v", res)
	}
	var found bool
	e.state.Read(func(c *engine.Cluster) {
		for _, p := range c.Problems() {
			if p.Kind == "Pod" && p.Object == "attacker/forged" && strings.Contains(p.Field, codec.PodAllocatedAnnotation) {
				found = true
			}
		}
	})
	if !found {
		t.Fatal("the forged pod is not reported as a problem")
	}
}
