package engine

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	nrNum, nrCores = "aws.amazon.com/neuron", "aws.amazon.com/neuroncore"
	nrAlloc        = "hami.io/aws-neuron-devices-allocated"
)

// neuronNode has devices Neuron devices of two cores each on an instance of that type.
func neuronNode(name, instance string, devices int) *corev1.Node {
	n := capNode(name, nrNum, devices, nrCores, 2*devices)
	n.Labels = map[string]string{"node.kubernetes.io/instance-type": instance}
	return n
}

// TestNeuronRequest: three NeuronCores are refused by HAMi's webhook (1 or a multiple of 2), which is reported.
func TestNeuronRequest(t *testing.T) {
	req, probs := ParseRequest(mkPod("ns", "p", vctr("c", nrCores, 3)), DefaultConfig())
	if len(req.Containers) != 0 || len(probs) != 1 {
		t.Fatalf("request %+v, problems %v", req, probs)
	}
}

// TestNeuronQuota: limits.aws.amazon.com/neuroncore is accounted as HAMi's quota does, the list's numbers
// summed (pkg/device/quota.go:97-117): for Neuron a core mask, so the second core alone counts 2.
func TestNeuronQuota(t *testing.T) {
	c := NewCluster(DefaultConfig())
	c.SetNode(neuronNode("i1", "inf2.xlarge", 2))
	c.SetQuota(&corev1.ResourceQuota{ObjectMeta: mkPod("team", "q").ObjectMeta,
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"limits." + nrCores: *resource.NewQuantity(4, resource.DecimalSI)}}})
	if probs := c.SetPod(counted(mkPod("team", "a", vctr("c", nrCores, 1)), "i1", nrAlloc, "i1-AWSNeuron-1,AWSNeuron,0,2:;")); len(probs) > 0 {
		t.Fatal(probs)
	}
	q := c.Quota("team")
	var found bool
	for _, d := range q.Devices {
		if d.Resource == "limits."+nrCores {
			found = true
			if d.Used != 2 || d.Limit != 4 || d.Unit != "NeuronCores" {
				t.Errorf("quota line %+v, want 2 of 4 NeuronCores", d)
			}
		}
	}
	if !found {
		t.Fatalf("no quota line for %s: %+v", nrCores, q)
	}
}

// TestNeuronRequestLine: a NeuronCore request reads as cores in their unit and no memory, in the
// explanation and in the request's strings the commands print.
func TestNeuronRequestLine(t *testing.T) {
	c := NewCluster(DefaultConfig())
	c.SetNode(mkNode("cpu", nil))
	v := c.Evaluate(mkPod("ns", "p", vctr("c", nrCores, 2)), EvalOptions{Now: testTime})
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
