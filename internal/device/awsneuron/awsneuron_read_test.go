package awsneuron_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/device/awsneuron"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// TestNeuronRequest: HAMi's webhook takes NeuronCores one at a time or in whole devices (1 or a multiple of
// 2); three are refused, which is reported, and the container asks for nothing.
func TestNeuronRequest(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Vendors = ft.Kinds(t, awsneuron.Family{})
	for cores, refused := range map[int]bool{1: false, 2: false, 3: true, 4: false} {
		req, probs := engine.ParseRequest(ft.MkPod("ns", "p", ft.Ctr("c", nrCores, cores)), cfg)
		if refused != (len(req.Containers) == 0) || refused != (len(probs) == 1) {
			t.Errorf("%d NeuronCores: request %+v, problems %v; want refused %v", cores, req.Containers, probs, refused)
		}
	}
}

// TestNeuronQuota: limits.aws.amazon.com/neuroncore is accounted as HAMi's quota does, the list's numbers
// summed (pkg/device/quota.go:97-117): for Neuron a core mask, so the second core alone counts 2.
func TestNeuronQuota(t *testing.T) {
	counted := ft.Counted(ft.MkPod("team", "a", ft.Ctr("c", nrCores, 1)), "i1", nrAlloc, "i1-AWSNeuron-1,AWSNeuron,0,2:;")
	w := ft.NewWorld(t, ft.Kinds(t, awsneuron.Family{}), []*corev1.Node{neuronNode("i1", "inf2.xlarge", 2)}, counted)
	w.C.SetQuota(&corev1.ResourceQuota{ObjectMeta: ft.MkPod("team", "q").ObjectMeta,
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"limits." + nrCores: *resource.NewQuantity(4, resource.DecimalSI)}}})
	if d := w.QuotaLine(t, "team", "limits."+nrCores); d.Used != 2 || d.Limit != 4 || d.Unit != "NeuronCores" {
		t.Errorf("quota line %+v, want 2 of 4 NeuronCores", d)
	}
}

// TestNeuronRequestLine: a NeuronCore request reads as cores in their unit and no memory, in the
// explanation and in the request's strings the commands print.
func TestNeuronRequestLine(t *testing.T) {
	w := ft.NewWorld(t, ft.Kinds(t, awsneuron.Family{}), []*corev1.Node{ft.Node("cpu", nil, nil)})
	v := w.Evaluate(ft.MkPod("ns", "p", ft.Ctr("c", nrCores, 2)))
	if len(v.Request.Containers) != 1 {
		t.Fatalf("request %+v", v.Request)
	}
	r := v.Request.Containers[0]
	if r.MemoryString() != "no memory" || !strings.Contains(r.CoresString(), "NeuronCores") {
		t.Errorf("request reads %q, %q; want no memory and NeuronCores", r.MemoryString(), r.CoresString())
	}
	if why := strings.Join(v.Explanation, "\n"); !strings.Contains(why, "each with no memory and") || strings.Contains(why, "% of the") {
		t.Errorf("explanation:\n%s", why)
	}
}
