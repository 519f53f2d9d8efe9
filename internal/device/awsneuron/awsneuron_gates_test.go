package awsneuron_test

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device/awsneuron"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

const (
	nrNum, nrCores = "aws.amazon.com/neuron", "aws.amazon.com/neuroncore"
	nrAlloc        = "hami.io/aws-neuron-devices-allocated"
)

// neuronNode has devices Neuron devices of two cores each on an instance of that type.
func neuronNode(name, instance string, devices int) *corev1.Node {
	n := ft.CapNode(name, nrNum, devices, nrCores, 2*devices)
	n.Labels = map[string]string{"node.kubernetes.io/instance-type": instance}
	return n
}

// TestNeuronGates are HAMi v2.10's AWS Neuron cases (pkg/device/awsneuron/device_test.go: Test_graphSelect,
// Test_GenerateResourceRequests, Test_PatchAnnotations, TestDevices_Fit, Test_checkUUID) as whole-pod
// evaluations on nodes whose devices come from their capacity, two NeuronCores each.
func TestNeuronGates(t *testing.T) {
	held := func(node, name string, list string, ctr corev1.Container) *corev1.Pod {
		return ft.Counted(ft.MkPod("ns", name, ctr), node, nrAlloc, list)
	}
	oneCore := func(node string, dev, mask int) *corev1.Pod {
		return held(node, "u"+strconv.Itoa(dev)+"-"+strconv.Itoa(mask), node+"-AWSNeuron-"+strconv.Itoa(dev)+",AWSNeuron,0,"+strconv.Itoa(mask)+":;", ft.Ctr("c", nrCores, 1))
	}
	whole := func(node string, dev int) *corev1.Pod {
		return held(node, "w"+strconv.Itoa(dev), node+"-AWSNeuron-"+strconv.Itoa(dev)+",AWSNeuron,0,3:;", ft.Ctr("c", nrNum, 1))
	}
	ft.Run(t, ft.Kinds(t, awsneuron.Family{}), []ft.Case{
		{Name: "a count takes a whole device, the highest free one", Node: neuronNode("t1", "trn1.32xlarge", 4),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", nrNum, 1)),
			Want: [][]string{{"t1-AWSNeuron-3"}}, Annotations: map[string]string{nrAlloc: "t1-AWSNeuron-3,AWSNeuron,0,3:;", "AWS_NEURON_IDS": "3",
				"NEURON_ALLOCATED": "false", "aws.amazon.com/predicate-node": "t1"},
			Absent: []string{"NEURON_RESOURCE_TYPE", "hami.io/vgpu-devices-allocated"}},
		{Name: "one NeuronCore: its bit in the list, its node-wide index", Node: neuronNode("t1", "trn1.32xlarge", 4),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", nrCores, 1)),
			Want: [][]string{{"t1-AWSNeuron-3"}}, Annotations: map[string]string{nrAlloc: "t1-AWSNeuron-3,AWSNeuron,0,1:;", "AWS_NEURON_IDS": "6", "NEURON_RESOURCE_TYPE": nrCores}},
		{Name: "a second NeuronCore on a shared device takes the free bit", Node: neuronNode("t1", "trn1.32xlarge", 4),
			Counted: []*corev1.Pod{oneCore("t1", 3, 1)},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", nrCores, 1)),
			Want:    [][]string{{"t1-AWSNeuron-3"}}, Annotations: map[string]string{nrAlloc: "t1-AWSNeuron-3,AWSNeuron,0,2:;", "AWS_NEURON_IDS": "7"}},
		{Name: "the free bit is the one the counted pod's mask leaves, not the next by count", Node: neuronNode("t1", "trn1.32xlarge", 4),
			Counted: []*corev1.Pod{oneCore("t1", 3, 2)},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", nrCores, 1)),
			Want:    [][]string{{"t1-AWSNeuron-3"}}, Annotations: map[string]string{nrAlloc: "t1-AWSNeuron-3,AWSNeuron,0,1:;", "AWS_NEURON_IDS": "6"}},
		{Name: "two containers of one NeuronCore share a device, each its own core", Node: neuronNode("t1", "trn1.32xlarge", 4),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("a", nrCores, 1), ft.Ctr("b", nrCores, 1)),
			Want: [][]string{{"t1-AWSNeuron-3"}, {"t1-AWSNeuron-3"}}, Annotations: map[string]string{nrAlloc: "t1-AWSNeuron-3,AWSNeuron,0,1:;t1-AWSNeuron-3,AWSNeuron,0,2:;", "AWS_NEURON_IDS": "6,7"}},
		{Name: "two NeuronCores skip a half-used device", Node: neuronNode("t1", "trn1.32xlarge", 4),
			Counted: []*corev1.Pod{oneCore("t1", 3, 1)},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", nrCores, 2)),
			Want:    [][]string{{"t1-AWSNeuron-2"}}, Annotations: map[string]string{nrAlloc: "t1-AWSNeuron-2,AWSNeuron,0,3:;", "AWS_NEURON_IDS": "4,5"}},
		{Name: "the list's mask is counted by its bits: a full device", Node: neuronNode("i1", "inf2.xlarge", 1),
			Counted: []*corev1.Pod{oneCore("i1", 0, 3)},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", nrCores, 1)), Code: engine.CardInsufficientCore,
			Explains: "needs 1 NeuronCores on one Neuron device; the most free is 0 of 2"},
		{Name: "a whole device needs every NeuronCore free", Node: neuronNode("i1", "inf2.xlarge", 1),
			Counted: []*corev1.Pod{oneCore("i1", 0, 2)},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", nrNum, 1)), Code: engine.CardInsufficientCore,
			Explains: "needs 2 NeuronCores on one Neuron device; the most free is 1 of 2"},
		{Name: "Trainium: four devices from a multiple of four", Node: neuronNode("t1", "trn1.32xlarge", 8),
			Counted: []*corev1.Pod{whole("t1", 1)},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", nrNum, 4)),
			Want:    [][]string{{"t1-AWSNeuron-4", "t1-AWSNeuron-5", "t1-AWSNeuron-6", "t1-AWSNeuron-7"}}, Annotations: map[string]string{nrAlloc: "t1-AWSNeuron-4,AWSNeuron,0,3:t1-AWSNeuron-5,AWSNeuron,0,3:t1-AWSNeuron-6,AWSNeuron,0,3:t1-AWSNeuron-7,AWSNeuron,0,3:;",
				"AWS_NEURON_IDS": "4,5,6,7"}},
		{Name: "Trainium: two devices is not a count it places", Node: neuronNode("t1", "trn1.32xlarge", 4),
			Pod: ft.MkPod("ns", "p", ft.Ctr("c", nrNum, 2)), Code: engine.NumaNotFit, Explains: "no 2 of them are a contiguous run"},
		{Name: "Inferentia: a contiguous run from any device; four cores are two whole devices", Node: neuronNode("i1", "inf2.48xlarge", 4),
			Counted: []*corev1.Pod{oneCore("i1", 0, 1)},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", nrCores, 4)),
			Want:    [][]string{{"i1-AWSNeuron-1", "i1-AWSNeuron-2"}}, Annotations: map[string]string{nrAlloc: "i1-AWSNeuron-1,AWSNeuron,0,3:i1-AWSNeuron-2,AWSNeuron,0,3:;", "AWS_NEURON_IDS": "2,3,4,5"}},
		{Name: "UUID selector", Node: neuronNode("i1", "inf2.xlarge", 1),
			Pod:  ft.WithAnno(ft.MkPod("ns", "p", ft.Ctr("c", nrNum, 1)), "aws.amazon.com/nouse-neuron-uuid", "i1-AWSNeuron-0"),
			Code: engine.CardUUIDMismatch},
	})
}

// HAMi v2.10.0's Neuron Fit places a request of several devices by graphSelect alone and fails it by one
// NumaNotFit over the node's devices, whatever kept each device out (pkg/device/awsneuron/device.go:450-456);
// one device keeps the per-device reasons.
func TestNeuronSeveralDevicesReason(t *testing.T) {
	kinds := ft.Kinds(t, awsneuron.Family{})
	whole := func(dev int) *corev1.Pod {
		return ft.Counted(ft.MkPod("ns", "w"+strconv.Itoa(dev), ft.Ctr("c", nrNum, 1)), "n1", nrAlloc, "n1-AWSNeuron-"+strconv.Itoa(dev)+",AWSNeuron,0,3:;")
	}
	ask := func(n string) *corev1.Pod { return ft.Pod("p", nil, map[string]string{nrNum: n}) }
	ft.Run(t, kinds, []ft.Case{
		{Name: "two of two, one used: one NumaNotFit", Node: neuronNode("n1", "trn1.32xlarge", 2), Counted: []*corev1.Pod{whole(1)},
			Pod: ask("2"), Reason: "1/2 NumaNotFit"},
		{Name: "two on Trainium: not a count graphSelect places", Node: neuronNode("n1", "trn1.32xlarge", 4),
			Pod: ask("2"), Reason: "1/4 NumaNotFit"},
		{Name: "four on Trainium from a multiple of four", Node: neuronNode("n1", "trn1.32xlarge", 8), Counted: []*corev1.Pod{whole(2)},
			Pod: ask("4"), Want: [][]string{{"n1-AWSNeuron-4", "n1-AWSNeuron-5", "n1-AWSNeuron-6", "n1-AWSNeuron-7"}}},
		{Name: "two on Inferentia from any device", Node: neuronNode("n1", "inf2.24xlarge", 4), Counted: []*corev1.Pod{whole(0)},
			Pod: ask("2"), Want: [][]string{{"n1-AWSNeuron-1", "n1-AWSNeuron-2"}}},
		{Name: "one device: the per-device reasons", Node: neuronNode("n1", "trn1.32xlarge", 1), Counted: []*corev1.Pod{whole(0)},
			Pod: ask("1"), Reason: "1/1 CardInsufficientCore"},
	})
}
