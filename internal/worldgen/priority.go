package worldgen

import (
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// Classes are the PriorityClasses WithPriorities adds: a default for pods that name none, a batch class that
// never preempts, and production.
var Classes = []struct {
	Name   string
	Value  int32
	Never  bool
	Global bool
}{{"experiment", 0, false, true}, {"batch", 100, true, false}, {"training", 500, false, false}, {"production", 1000, false, false}}

// WithPriorities gives a world what preemption reads: the PriorityClasses above, a priority on every pod (as
// admission writes spec.priority, or only the class's name, as a hand-written snapshot may), start times for
// running pods, app labels and PodDisruptionBudgets over some of them. The same seed gives the same result;
// the world is changed in place.
func WithPriorities(s *snapshot.Snapshot, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	for _, c := range Classes {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: c.Name, CreationTimestamp: metav1.NewTime(Epoch)},
			Value: c.Value, GlobalDefault: c.Global}
		if c.Never {
			never := corev1.PreemptNever
			pc.PreemptionPolicy = &never
		}
		s.PriorityClasses = append(s.PriorityClasses, pc)
	}
	apps := []string{"infer", "train", "notebook"}
	for _, p := range s.Pods.Slice() { // whole: a world is built in memory
		// Running pods lean low and pending ones high, so that worlds hold preemptions to make.
		c := Classes[r.IntN(len(Classes)-1)]
		if p.Spec.NodeName == "" {
			c = Classes[1+r.IntN(len(Classes)-1)]
		}
		switch r.IntN(4) {
		case 0: // no class named: the global default's value
			if r.IntN(2) == 0 {
				v := Classes[0].Value
				p.Spec.Priority = &v
			}
		case 1: // the class's name alone
			p.Spec.PriorityClassName = c.Name
		default:
			v := c.Value
			p.Spec.PriorityClassName, p.Spec.Priority = c.Name, &v
		}
		if p.Spec.NodeName != "" {
			start := metav1.NewTime(Epoch.Add(time.Duration(r.IntN(3600)) * time.Second))
			p.Status.StartTime = &start
		}
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels["app"] = apps[r.IntN(len(apps))]
	}
	for _, ns := range []string{"team-a", "team-b", "default"} {
		if r.IntN(2) == 0 {
			continue
		}
		one := intstr.FromInt32(1)
		app := apps[r.IntN(len(apps))]
		s.PDBs = append(s.PDBs, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s", ns, app), Namespace: ns, CreationTimestamp: metav1.NewTime(Epoch)},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
			Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: int32(r.IntN(2))},
		})
	}
}
