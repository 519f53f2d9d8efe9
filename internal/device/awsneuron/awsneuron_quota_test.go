package awsneuron_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// HAMi's webhook checks limits.aws.amazon.com/neuroncore (pkg/scheduler/webhook.go:145-189) with what
// GenerateResourceRequests asks (pkg/device/awsneuron/device.go:287-332): a count request asks
// coresPerAWSNeuron per device, the cores per device of the first node HAMi registered (GetNodeDevices,
// 163-166; none before any node, and the webhook then checks nothing, webhook.go:181-183); a neuroncore
// request asks its cores. The namespace's use is the sum of the counted pods' device-list numbers, which
// for Neuron are core masks (pkg/device/quota.go:97-117): a device's second core alone counts 2.
func TestNeuronWebhookQuota(t *testing.T) {
	usedMask2 := ft.OnNode(ft.MkPod("ns", "u", ft.Ctr("c", nrCores, 1)), "t1", nrAlloc, "t1-AWSNeuron-0,AWSNeuron,0,2:;")
	oneCorePerDevice := ft.CapNode("o1", nrNum, 2, nrCores, 2)
	oneCorePerDevice.Labels = map[string]string{"node.kubernetes.io/instance-type": "inf2.xlarge"}
	cases := []struct {
		name  string
		nodes []*corev1.Node
		used  []*corev1.Pod
		limit int64
		pod   *corev1.Pod
		want  string // "" when admitted
	}{
		{"no Neuron node registered: a count asks no cores", nil, nil, 1, ft.MkPod("ns", "p", ft.Ctr("c", nrNum, 2)), ""},
		{"a count asks the registered cores per device", []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 4)}, nil, 4,
			ft.MkPod("ns", "p", ft.Ctr("c", nrNum, 2)), ""},
		{"a count above the limit", []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 4)}, nil, 3, ft.MkPod("ns", "p", ft.Ctr("c", nrNum, 2)),
			"exceeding resource quota: limits.aws.amazon.com/neuroncore in ResourceQuota q: 0 NeuronCores used + 4 NeuronCores asked > 3 NeuronCores limit"},
		{"one core per device registered", []*corev1.Node{oneCorePerDevice}, nil, 1, ft.MkPod("ns", "p", ft.Ctr("c", nrNum, 2)),
			"exceeding resource quota: limits.aws.amazon.com/neuroncore in ResourceQuota q: 0 NeuronCores used + 2 NeuronCores asked > 1 NeuronCores limit"},
		{"neuroncore asks its cores", nil, nil, 4, ft.MkPod("ns", "p", ft.Ctr("c", nrCores, 4)), ""},
		{"neuroncore above the limit", nil, nil, 3, ft.MkPod("ns", "p", ft.Ctr("c", nrCores, 4)),
			"exceeding resource quota: limits.aws.amazon.com/neuroncore in ResourceQuota q: 0 NeuronCores used + 4 NeuronCores asked > 3 NeuronCores limit"},
		{"a counted second core counts its mask, 2", []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 4)}, []*corev1.Pod{usedMask2}, 2,
			ft.MkPod("ns", "p", ft.Ctr("c", nrCores, 1)),
			"exceeding resource quota: limits.aws.amazon.com/neuroncore in ResourceQuota q: 2 NeuronCores used + 1 NeuronCores asked > 2 NeuronCores limit"},
		{"and fits a limit of 3", []*corev1.Node{neuronNode("t1", "trn1.32xlarge", 4)}, []*corev1.Pod{usedMask2}, 3,
			ft.MkPod("ns", "p", ft.Ctr("c", nrCores, 1)), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := engine.NewCluster(engine.DefaultConfig())
			for _, n := range tc.nodes {
				if probs := c.SetNode(n); len(probs) > 0 {
					t.Fatal(probs)
				}
			}
			for _, p := range tc.used {
				if probs := c.SetPod(p); len(probs) > 0 {
					t.Fatal(probs)
				}
			}
			c.SetQuota(&corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q"},
				Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"limits." + nrCores: *resource.NewQuantity(tc.limit, resource.DecimalSI)}}})
			got := ""
			if r := c.WebhookRefusal(tc.pod); r != nil {
				got = r.String()
			}
			if got != tc.want {
				t.Errorf("refusal %q, want %q", got, tc.want)
			}
		})
	}
}
