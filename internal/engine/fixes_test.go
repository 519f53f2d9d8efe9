package engine

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestProveFixesOtherDeviceTypes: a pod of another device type gets fixes in its own resources and words,
// and each one, applied here by hand, makes the pod fit.
func TestProveFixesOtherDeviceTypes(t *testing.T) {
	dcu := func() *corev1.Node { return vendorNode("d1", dcuReg, vdevs("d1", "dcu", "DCU-Z100", 2, 32768, 100, 4)) }
	cases := []struct {
		name  string
		pod   *corev1.Pod
		field string // the fix's field
		to    string
		apply func(p *corev1.Pod)
	}{
		{name: "memory", pod: mkPod("ns", "big", vctr("c", dcuNum, 1, dcuMem, 40000)),
			field: "spec.containers[*].resources.limits[hygon.com/dcumem]", to: "32768 MiB",
			apply: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Limits[dcuMem] = *resource.NewQuantity(32768, resource.DecimalSI)
			}},
		{name: "count", pod: mkPod("ns", "many", vctr("c", dcuNum, 3, dcuMem, 1000)),
			field: "spec.containers[c].resources.limits[hygon.com/dcunum]", to: "2",
			apply: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Limits[dcuNum] = *resource.NewQuantity(2, resource.DecimalSI)
			}},
		{name: "type filter", pod: withAnno(mkPod("ns", "typed", vctr("c", dcuNum, 1, dcuMem, 1000)), "hygon.com/use-dcutype", "K100"),
			field: "metadata.annotations[hygon.com/use-dcutype]", to: "(none)",
			apply: func(p *corev1.Pod) { delete(p.Annotations, "hygon.com/use-dcutype") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster([]*corev1.Node{dcu()}, nil)
			opts := EvalOptions{Now: testTime}
			v := c.Evaluate(tc.pod, opts)
			if v.Fits {
				t.Fatalf("the pod fits before any fix: %s", v.Summary)
			}
			c.ProveFixes(tc.pod, v, opts)
			var found *Fix
			for i := range v.Fixes {
				if v.Fixes[i].Field == tc.field {
					found = &v.Fixes[i]
				}
			}
			if found == nil {
				t.Fatalf("no fix of %s among %+v", tc.field, v.Fixes)
			}
			if found.To != tc.to || !found.Sufficient || found.Node != "d1" {
				t.Errorf("fix %+v: want %s -> %s, sufficient on d1", *found, tc.field, tc.to)
			}
			if strings.Contains(found.What, "GPU") {
				t.Errorf("fix %q speaks of GPUs for a DCU pod", found.What)
			}
			p := tc.pod.DeepCopy()
			tc.apply(p)
			if after := c.Evaluate(p, opts); !after.Fits {
				t.Errorf("after the fix by hand the pod still does not fit: %s", after.Summary)
			}
		})
	}
}
