package familytest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// The whole-pod cases of HAMi's own device tests (pkg/device/<family>/device_test.go), as a family's package
// states them: a cluster with every registered family (the chart defaults), a pod evaluated there, the verdict
// checked by code, detail, explanation and bind annotations.

// TestTime is the bind time of the cases' placements.
var TestTime = time.Unix(1700000000, 0)

// GateCase is one whole-pod case.
type GateCase struct {
	Name  string
	Quota corev1.ResourceList
	Nodes []*corev1.Node
	Pods  []*corev1.Pod
	Pod   *corev1.Pod
	Fits  bool
	// Code is the one reason of a pod that does not fit.
	Code engine.Code
	// Annos are wanted placement annotations (a subset); Absent must not be written.
	Annos  map[string]string
	Absent []string
	// GPUDetail is wanted in some device's result on the first node.
	GPUDetail string
	// Explains is wanted in the explanation of a pod that does not fit.
	Explains string
}

// RunGateCases evaluates every case on a cluster of the default configuration (every registered family).
func RunGateCases(t *testing.T, tests []GateCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			c := engine.NewCluster(engine.DefaultConfig())
			if tc.Quota != nil {
				c.SetQuota(&corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: tc.Quota}})
			}
			for _, n := range tc.Nodes {
				if probs := c.SetNode(n); len(probs) > 0 {
					t.Fatalf("node problems: %v", probs)
				}
			}
			for _, p := range tc.Pods {
				if probs := c.SetPod(p); len(probs) > 0 {
					t.Fatalf("pod problems: %v", probs)
				}
			}
			v := c.Evaluate(tc.Pod, engine.EvalOptions{DetailAll: true})
			if tc.GPUDetail != "" {
				found := false
				for _, g := range v.Nodes[0].GPUs {
					found = found || strings.Contains(g.Result.Detail, tc.GPUDetail)
				}
				if !found {
					t.Errorf("no device says %q: %+v", tc.GPUDetail, v.Nodes[0].GPUs)
				}
			}
			if v.Fits != tc.Fits {
				t.Fatalf("fits = %v, want %v: %s %v", v.Fits, tc.Fits, v.Summary, v.Reasons)
			}
			if !tc.Fits {
				if len(v.Reasons) != 1 || v.Reasons[0].Code != tc.Code {
					t.Fatalf("reasons %v, want %s: %s", v.Reasons, tc.Code, v.Summary)
				}
				why := strings.Join(v.Explanation, "\n")
				if tc.Explains != "" && !strings.Contains(why, tc.Explains) {
					t.Errorf("explanation lacks %q:\n%s", tc.Explains, why)
				}
				if strings.Contains(why, "MIG") || strings.Contains(why, "numa-bind") {
					t.Errorf("explanation of a %s pod speaks of NVIDIA's MIG or numa-bind:\n%s", tc.Nodes[0].Name, why)
				}
				return
			}
			got := v.Placement.Annotations(TestTime)
			for k, want := range tc.Annos {
				if got[k] != want {
					t.Errorf("%s = %q, want %q", k, got[k], want)
				}
			}
			for _, k := range tc.Absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s is written", k)
				}
			}
		})
	}
}

// CapNode is a node whose device plugin registers no annotation: its devices come from status.capacity
// (resource, value pairs).
func CapNode(name string, kv ...any) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}}}
	n.Status.Capacity = corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Status.Capacity[corev1.ResourceName(kv[i].(string))] = *resource.NewQuantity(int64(kv[i+1].(int)), resource.DecimalSI)
	}
	return n
}

// RegNode is a node registering devs in the register annotation key.
func RegNode(name, key string, devs []codec.DeviceInfo) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{key: codec.FormatNodeRegister(devs)}}}
}

// Devs is n devices of a type named <node>-<word><i>, with memory, cores and slots.
func Devs(node, word, typ string, n int, mem, cores int64, slots int32) []codec.DeviceInfo {
	out := make([]codec.DeviceInfo, n)
	for i := range out {
		out[i] = codec.DeviceInfo{ID: fmt.Sprintf("%s-%s%d", node, word, i), Index: i, Count: slots, Devmem: mem, Devcore: cores, Type: typ, Health: true}
	}
	return out
}

// Ctr is a container asking for resources by name (resource, value pairs).
func Ctr(name string, kv ...any) corev1.Container {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i].(string))] = *resource.NewQuantity(int64(kv[i+1].(int)), resource.DecimalSI)
	}
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Limits: l}}
}

// MkPod is a pending pod of namespace ns with these containers.
func MkPod(ns, name string, ctrs ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{}}, Spec: corev1.PodSpec{Containers: ctrs}}
}

// WithAnno sets annotations (key, value pairs) on p.
func WithAnno(p *corev1.Pod, kv ...string) *corev1.Pod {
	for i := 0; i+1 < len(kv); i += 2 {
		p.Annotations[kv[i]] = kv[i+1]
	}
	return p
}

// OnNode places p on node with the device list under key, as a bound pod.
func OnNode(p *corev1.Pod, node, key, val string) *corev1.Pod {
	p.Annotations[codec.PodNodeAnnotation] = node
	p.Annotations[key] = val
	p.Spec.NodeName = node
	return p
}
