package extender

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/preempt"
)

// The victim search reads what kube-scheduler's preemption reads besides the pods: the PriorityClasses (a pod's
// preemptionPolicy may come from its class) and the PodDisruptionBudgets (a choice that violates none first).
// The informers keep them here (informers.go).

// SetPriorityClass records a PriorityClass.
func (st *State) SetPriorityClass(pc *schedulingv1.PriorityClass) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.classes[pc.Name] = pc
}

// RemovePriorityClass forgets a PriorityClass.
func (st *State) RemovePriorityClass(name string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.classes, name)
}

// SetPDB records a PodDisruptionBudget.
func (st *State) SetPDB(b *policyv1.PodDisruptionBudget) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.pdbs[b.Namespace+"/"+b.Name] = b
}

// RemovePDB forgets a PodDisruptionBudget.
func (st *State) RemovePDB(namespace, name string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.pdbs, namespace+"/"+name)
}

// withSearch runs f with the cluster and the victim search's index over every pod the informer delivered,
// the PriorityClasses and the budgets. The index is built from a copy taken under the read lock (at 100k pods
// it takes longer than the search); f runs under the writer lock: the search takes pods off a node for the
// length of each question (engine.Probe), which no evaluation may see. A pod that changed in between is
// judged by the cluster (a victim the index lists but the cluster no longer counts frees nothing, and the
// preemption is proven on the cluster before it is carried out).
func (st *State) withSearch(f func(c *engine.Cluster, ix *preempt.Index, pods []*corev1.Pod)) {
	st.mu.RLock()
	pods := make([]*corev1.Pod, 0, len(st.objects))
	for _, p := range st.objects {
		pods = append(pods, p)
	}
	classes := make([]*schedulingv1.PriorityClass, 0, len(st.classes))
	for _, pc := range st.classes {
		classes = append(classes, pc)
	}
	pdbs := make([]*policyv1.PodDisruptionBudget, 0, len(st.pdbs))
	for _, b := range st.pdbs {
		pdbs = append(pdbs, b)
	}
	st.mu.RUnlock()
	ix := preempt.NewIndex(pods, classes, pdbs)
	st.mu.Lock()
	defer st.mu.Unlock()
	f(st.cluster, ix, pods)
}

// anyLowerBound reports whether a pod bound to a node, not finished nor terminating, has a priority below prio:
// without one no preemption is possible, which the victim search need not take the writer lock to find.
func (st *State) anyLowerBound(prio int32) bool {
	st.mu.RLock()
	defer st.mu.RUnlock()
	for _, p := range st.objects {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed &&
			podPriority(p) < prio {
			return true
		}
	}
	return false
}
