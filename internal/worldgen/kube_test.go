package worldgen

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// TestKubeWorlds: Options.Kube keeps a seed's nodes, registrations and running pods, drops what a bare control
// plane cannot hold, and over a hundred seeds gives every constraint the oracle test needs.
func TestKubeWorlds(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 100; seed++ {
		plain, kube := World(seed, Options{}), World(seed, Options{Kube: true})
		if len(plain.Nodes) != len(kube.Nodes) || plain.Pods.Len() != kube.Pods.Len() {
			t.Fatalf("seed %d: %d nodes %d pods, Kube %d nodes %d pods", seed, len(plain.Nodes), plain.Pods.Len(), len(kube.Nodes), kube.Pods.Len())
		}
		for i, n := range kube.Nodes {
			if n.Name != plain.Nodes[i].Name || !reflect.DeepEqual(n.Annotations, plain.Nodes[i].Annotations) {
				t.Errorf("seed %d: node %s differs from the plain world's beyond kube constraints", seed, n.Name)
			}
			if n.Labels[corev1.LabelHostname] != n.Name || n.Labels[ZoneLabel] == "" {
				t.Errorf("seed %d: node %s lacks the hostname or zone label: %v", seed, n.Name, n.Labels)
			}
			if n.Spec.Unschedulable {
				seen["cordon"]++
			}
			for _, taint := range n.Spec.Taints {
				seen[string(taint.Effect)]++
			}
		}
		if kube.Volcano || len(kube.Queues)+len(kube.PodGroups) > 0 {
			t.Errorf("seed %d: Volcano objects in a Kube world", seed)
		}
		for _, q := range kube.Quotas {
			for name := range q.Spec.Hard {
				if strings.HasPrefix(string(name), "requests.") {
					t.Errorf("seed %d: quota %s/%s keeps %s", seed, q.Namespace, q.Name, name)
				}
			}
		}
		for i, p := range kube.Pods.Slice() {
			if p.Annotations[codec.CardNameAnnotation] != "" {
				t.Errorf("seed %d: pod %s keeps a card annotation", seed, p.Name)
			}
			if p.Spec.NodeName != "" {
				if p.Spec.NodeName != plain.Pods.At(i).Spec.NodeName || p.Annotations[codec.PodAllocatedAnnotation] != plain.Pods.At(i).Annotations[codec.PodAllocatedAnnotation] {
					t.Errorf("seed %d: running pod %s moved", seed, p.Name)
				}
				continue
			}
			if !slices.Contains(KubeSchedulers, p.Spec.SchedulerName) {
				t.Errorf("seed %d: pending pod %s addressed to %q", seed, p.Name, p.Spec.SchedulerName)
			}
			seen["scheduler "+p.Spec.SchedulerName]++
			if len(p.Spec.NodeSelector) > 0 {
				seen["nodeSelector"]++
			}
			if p.Spec.Affinity != nil {
				seen["affinity"]++
			}
			if len(p.Spec.Tolerations) > 0 {
				seen["toleration"]++
			}
		}
	}
	for _, want := range []string{"cordon", "NoSchedule", "NoExecute", "PreferNoSchedule", "nodeSelector", "affinity", "toleration",
		"scheduler hami-scheduler", "scheduler default-scheduler", "scheduler "} {
		if seen[want] < 5 {
			t.Errorf("only %d of %q in 100 Kube worlds", seen[want], want)
		}
	}
}
