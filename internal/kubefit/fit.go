package kubefit

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// nodeResourcesFitFilter is kube-scheduler's NodeResourcesFit filter: the pods count, then cpu, memory and
// ephemeral-storage, then the scalar resources (extended, hugepages-*, attachable-volumes-*) in name order.
// A resource is short when the pod's request is more than the node's allocatable less what the pods already
// on the node request; a resource missing from allocatable counts as zero. Resources the caller names as
// ignored (HAMi's, which the extender config marks ignoredByScheduler) are skipped.
func nodeResourcesFitFilter(st *podState, ni *nodeInfo) []Failure {
	var out []Failure
	alloc := ni.node.Status.Allocatable
	if ni.hasPods && !st.ignored[corev1.ResourcePods] {
		// A node without allocatable pods is one a hand-written snapshot left out: the API server's nodes
		// always have it (kube-scheduler would count it as zero).
		if int64(ni.pods)+1 > ni.allocPods {
			allowed := alloc[corev1.ResourcePods]
			out = append(out, Failure{Reason: ReasonTooManyPods,
				Message: fmt.Sprintf("needs pods 1, %d free of %s allocatable (%d pods on the node)",
					ni.allocPods-int64(ni.pods), allowed.String(), ni.pods)})
		}
	}
	for i, name := range st.checked {
		// kube-scheduler compares int64s: milli-CPU, and every other resource's Value (rounded up).
		switch name {
		case corev1.ResourceCPU:
			if st.checkedValues[i] <= ni.allocCPU-ni.usedCPU {
				continue
			}
		case corev1.ResourceMemory:
			if st.checkedValues[i] <= ni.allocMem-ni.usedMem {
				continue
			}
		default:
			capacity := alloc[name]
			if st.checkedValues[i] <= capacity.Value()-ni.used.value(name) {
				continue
			}
		}
		capacity, used := alloc[name], ni.used.Requested(name)
		req := st.requests[name]
		free := capacity.DeepCopy()
		free.Sub(used)
		{
			out = append(out, Failure{Reason: "Insufficient " + string(name),
				Message: fmt.Sprintf("needs %s %s, %s free of %s allocatable", name, req.String(), free.String(), capacity.String())})
		}
	}
	return out
}

// requestedResources lists the resources the pod requests that the filter checks, in kube-scheduler's order.
func requestedResources(st *podState) []corev1.ResourceName {
	var scalar []corev1.ResourceName
	for name, q := range st.requests {
		if isScalarResource(name) && q.Sign() > 0 && !st.ignored[name] {
			scalar = append(scalar, name)
		}
	}
	sort.Slice(scalar, func(i, j int) bool { return scalar[i] < scalar[j] })
	var out []corev1.ResourceName
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q := st.requests[name]; q.Sign() > 0 && !st.ignored[name] {
			out = append(out, name)
		}
	}
	return append(out, scalar...)
}

// isScalarResource is kube-scheduler's IsScalarResourceName: extended and prefixed native resources (a name
// with a domain), hugepages-* and attachable-volumes-*.
func isScalarResource(name corev1.ResourceName) bool {
	n := string(name)
	return strings.Contains(n, "/") || strings.HasPrefix(n, corev1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(n, corev1.ResourceAttachableVolumesPrefix)
}
