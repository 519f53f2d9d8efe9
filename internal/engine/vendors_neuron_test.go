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

// TestNeuronGates are HAMi v2.10's AWS Neuron cases (pkg/device/awsneuron/device_test.go: Test_graphSelect,
// Test_GenerateResourceRequests, Test_PatchAnnotations, TestDevices_Fit, Test_checkUUID) as whole-pod
// evaluations on nodes whose devices come from their capacity, two NeuronCores each.
func TestNeuronGates(t *testing.T) {
	held := func(node, name string, list string, ctr corev1.Container) *corev1.Pod {
		return counted(mkPod("ns", name, ctr), node, nrAlloc, list)
	}
	oneCore := func(node string, dev, mask int) *corev1.Pod {
		return held(node, "u"+itoa(dev)+"-"+itoa(mask), node+"-AWSNeuron-"+itoa(dev)+",AWSNeuron,0,"+itoa(mask)+":;", vctr("c", nrCores, 1))
	}
	whole := func(node string, dev int) *corev1.Pod {
		return held(node, "w"+itoa(dev), node+"-AWSNeuron-"+itoa(dev)+",AWSNeuron,0,3:;", vctr("c", nrNum, 1))
	}
	runVendorCases(t, []vendorCase{
		{name: "a count takes a whole device, the highest free one", nodes: []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 4)},
			pod:  mkPod("ns", "p", vctr("c", nrNum, 1)),
			fits: true, annos: map[string]string{nrAlloc: "t1-AWSNeuron-3,AWSNeuron,0,3:;", "AWS_NEURON_IDS": "3",
				"NEURON_ALLOCATED": "false", "aws.amazon.com/predicate-node": "t1"},
			absent: []string{"NEURON_RESOURCE_TYPE", "hami.io/vgpu-devices-allocated"}},
		{name: "one NeuronCore: its bit in the list, its node-wide index", nodes: []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 4)},
			pod:  mkPod("ns", "p", vctr("c", nrCores, 1)),
			fits: true, annos: map[string]string{nrAlloc: "t1-AWSNeuron-3,AWSNeuron,0,1:;", "AWS_NEURON_IDS": "6", "NEURON_RESOURCE_TYPE": nrCores}},
		{name: "a second NeuronCore on a shared device takes the free bit", nodes: []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 4)},
			pods: []*corev1.Pod{oneCore("t1", 3, 1)},
			pod:  mkPod("ns", "p", vctr("c", nrCores, 1)),
			fits: true, annos: map[string]string{nrAlloc: "t1-AWSNeuron-3,AWSNeuron,0,2:;", "AWS_NEURON_IDS": "7"}},
		{name: "the free bit is the one the counted pod's mask leaves, not the next by count", nodes: []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 4)},
			pods: []*corev1.Pod{oneCore("t1", 3, 2)},
			pod:  mkPod("ns", "p", vctr("c", nrCores, 1)),
			fits: true, annos: map[string]string{nrAlloc: "t1-AWSNeuron-3,AWSNeuron,0,1:;", "AWS_NEURON_IDS": "6"}},
		{name: "two containers of one NeuronCore share a device, each its own core", nodes: []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 4)},
			pod:  mkPod("ns", "p", vctr("a", nrCores, 1), vctr("b", nrCores, 1)),
			fits: true, annos: map[string]string{nrAlloc: "t1-AWSNeuron-3,AWSNeuron,0,1:;t1-AWSNeuron-3,AWSNeuron,0,2:;", "AWS_NEURON_IDS": "6,7"}},
		{name: "two NeuronCores skip a half-used device", nodes: []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 4)},
			pods: []*corev1.Pod{oneCore("t1", 3, 1)},
			pod:  mkPod("ns", "p", vctr("c", nrCores, 2)),
			fits: true, annos: map[string]string{nrAlloc: "t1-AWSNeuron-2,AWSNeuron,0,3:;", "AWS_NEURON_IDS": "4,5"}},
		{name: "the list's mask is counted by its bits: a full device", nodes: []*corev1.Node{neuronNode("i1", "inf2.xlarge", 1)},
			pods: []*corev1.Pod{oneCore("i1", 0, 3)},
			pod:  mkPod("ns", "p", vctr("c", nrCores, 1)), code: CardInsufficientCore,
			explains: "needs 1 NeuronCores on one Neuron device; the most free is 0 of 2"},
		{name: "a whole device needs every NeuronCore free", nodes: []*corev1.Node{neuronNode("i1", "inf2.xlarge", 1)},
			pods: []*corev1.Pod{oneCore("i1", 0, 2)},
			pod:  mkPod("ns", "p", vctr("c", nrNum, 1)), code: CardInsufficientCore,
			explains: "needs 2 NeuronCores on one Neuron device; the most free is 1 of 2"},
		{name: "Trainium: four devices from a multiple of four", nodes: []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 8)},
			pods: []*corev1.Pod{whole("t1", 1)},
			pod:  mkPod("ns", "p", vctr("c", nrNum, 4)),
			fits: true, annos: map[string]string{nrAlloc: "t1-AWSNeuron-4,AWSNeuron,0,3:t1-AWSNeuron-5,AWSNeuron,0,3:t1-AWSNeuron-6,AWSNeuron,0,3:t1-AWSNeuron-7,AWSNeuron,0,3:;",
				"AWS_NEURON_IDS": "4,5,6,7"}},
		{name: "Trainium: two devices is not a count it places", nodes: []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 4)},
			pod: mkPod("ns", "p", vctr("c", nrNum, 2)), code: NumaNotFit, explains: "no 2 of them are a contiguous run"},
		{name: "Inferentia: a contiguous run from any device; four cores are two whole devices", nodes: []*corev1.Node{neuronNode("i1", "inf2.48xlarge", 4)},
			pods: []*corev1.Pod{oneCore("i1", 0, 1)},
			pod:  mkPod("ns", "p", vctr("c", nrCores, 4)),
			fits: true, annos: map[string]string{nrAlloc: "i1-AWSNeuron-1,AWSNeuron,0,3:i1-AWSNeuron-2,AWSNeuron,0,3:;", "AWS_NEURON_IDS": "2,3,4,5"}},
		{name: "UUID selector", nodes: []*corev1.Node{neuronNode("i1", "inf2.xlarge", 1)},
			pod:  withAnno(mkPod("ns", "p", vctr("c", nrNum, 1)), "aws.amazon.com/nouse-neuron-uuid", "i1-AWSNeuron-0"),
			code: CardUUIDMismatch},
	})
}

// TestNeuronRequest: three NeuronCores are refused by HAMi's webhook (1 or a multiple of 2), which is reported.
func TestNeuronRequest(t *testing.T) {
	req, probs := ParseRequest(mkPod("ns", "p", vctr("c", nrCores, 3)), DefaultConfig())
	if len(req.Containers) != 0 || len(probs) != 1 {
		t.Fatalf("request %+v, problems %v", req, probs)
	}
}

// TestNeuronQuota: limits.aws.amazon.com/neuroncore is accounted in NeuronCores, the bits of the list's masks.
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
			if d.Used != 1 || d.Limit != 4 || d.Unit != "NeuronCores" {
				t.Errorf("quota line %+v, want 1 of 4 NeuronCores", d)
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
