package worldgen

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// EveryKind is a world with three nodes of each device type (registered by its annotation where it has one,
// and in capacity by its count resource; the second node with one device unhealthy) and pending pods of
// HAMi's profile asking for one, two and five devices of each type with memory: every family's rows decide
// some node, fitting or not. For tests that hold two paths of the engine to one answer.
func EveryKind(kinds []device.Kind) *snapshot.Snapshot {
	s := &snapshot.Snapshot{Source: "worldgen every kind"}
	for k, kind := range kinds {
		for j := range 3 {
			name := fmt.Sprintf("kind%02d-%d", k, j)
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}}}
			n.Status.Capacity, n.Status.Allocatable = corev1.ResourceList{}, corev1.ResourceList{}
			devs := make([]codec.DeviceInfo, 2+j)
			for i := range devs {
				devs[i] = codec.DeviceInfo{ID: fmt.Sprintf("%s-d%d", name, i), Index: i, Count: 4, Devmem: int64(16384 * (1 + j)),
					Devcore: 100, Type: kind.Name, Health: j != 1 || i != 0}
			}
			if kind.Register != "" {
				n.Annotations[kind.Register] = codec.FormatNodeRegister(devs)
			}
			if kind.Count != "" {
				q := *resource.NewQuantity(int64(len(devs)), resource.DecimalSI)
				n.Status.Capacity[corev1.ResourceName(kind.Count)], n.Status.Allocatable[corev1.ResourceName(kind.Count)] = q, q
			}
			s.Nodes = append(s.Nodes, n)
		}
		if kind.Count == "" {
			continue
		}
		for _, ask := range []int64{1, 2, 5} {
			l := corev1.ResourceList{corev1.ResourceName(kind.Count): *resource.NewQuantity(ask, resource.DecimalSI)}
			if kind.Memory != "" {
				l[corev1.ResourceName(kind.Memory)] = *resource.NewQuantity(12000*ask, resource.DecimalSI)
			}
			s.Pods.Add(&corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("ask-%02d-%d", k, ask), UID: types.UID(fmt.Sprintf("uid-%02d-%d", k, ask))},
				Spec:       corev1.PodSpec{SchedulerName: "hami-scheduler", Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Limits: l}}}},
				Status:     corev1.PodStatus{Phase: corev1.PodPending},
			})
		}
	}
	return s
}
