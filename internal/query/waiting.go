package query

import (
	"fmt"
	"iter"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// YoungPod is how long kube-scheduler may reasonably take to try a new pod; a pod younger than this that has
// no FailedScheduling event may simply not have been tried.
const YoungPod = 30 * time.Second

// SchedulerLeases are the leader Lease names a scheduler of this name holds: the profile's own name (HAMi's
// chart and deploy/extender elect on hami-scheduler), and kube-scheduler's default lease for default-scheduler.
func SchedulerLeases(name string) []string {
	if name == "" || name == corev1.DefaultSchedulerName {
		return []string{"kube-scheduler"}
	}
	return []string{name}
}

// SchedulerSighting says whether a scheduler of this name is seen running: a held leader Lease of its name, or a
// running pod named after it (kube-scheduler's static pod for default-scheduler). known is false when the
// snapshot can tell neither (no Leases read, no pod of kube-system in it).
type SchedulerSighting struct {
	Seen, Known bool
	How         string // "Lease kube-system/hami-scheduler held by ...", "pod kube-system/kube-scheduler-cp Running"
}

// SeeScheduler looks for the scheduler in the snapshot's Leases and pods.
func SeeScheduler(name string, leases []*coordinationv1.Lease, leasesRead bool, pods iter.Seq[*corev1.Pod], now time.Time) SchedulerSighting {
	var out SchedulerSighting
	out.Known = leasesRead
	for _, l := range leases {
		for _, want := range SchedulerLeases(name) {
			if l.Name != want || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
				continue
			}
			if r := l.Spec.RenewTime; r != nil && !now.IsZero() && l.Spec.LeaseDurationSeconds != nil &&
				now.Sub(r.Time) > 4*time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second {
				continue // expired long ago: the holder is gone
			}
			return SchedulerSighting{Seen: true, Known: true, How: fmt.Sprintf("Lease %s/%s held by %s", l.Namespace, l.Name, *l.Spec.HolderIdentity)}
		}
	}
	prefix := name + "-"
	if name == "" || name == corev1.DefaultSchedulerName {
		prefix = "kube-scheduler"
	}
	// The first running pod by namespace/name (the first listed among equal ones), whatever order the surface
	// holds the pods in; found without sorting every pod of the snapshot.
	// Its name is kept, not the pod: a snapshot's sequence reuses its object (Snapshot.Pods.Scan).
	var firstNS, firstName string
	found := false
	if pods == nil {
		pods = noPods
	}
	for p := range pods {
		if p == nil {
			continue
		}
		if p.Namespace == "kube-system" {
			out.Known = true
		}
		if strings.HasPrefix(p.Name, prefix) && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil &&
			(!found || p.Namespace < firstNS || p.Namespace == firstNS && p.Name < firstName) {
			firstNS, firstName, found = p.Namespace, p.Name, true
		}
	}
	if found {
		return SchedulerSighting{Seen: true, Known: true, How: fmt.Sprintf("pod %s/%s Running", firstNS, firstName)}
	}
	return out
}

// WhyWaiting says why a pod the verdict lets fit may still be Pending, most telling first: scheduling gates,
// a nomination, no FailedScheduling event with no scheduler of its name seen, or its age. nil for a pod that
// does not fit or is bound.
func WhyWaiting(pod *corev1.Pod, v *engine.Verdict, events []*corev1.Event, seen SchedulerSighting, now time.Time) []string {
	if pod == nil || v == nil || !v.Fits || pod.Spec.NodeName != "" {
		return nil
	}
	var out []string
	if gates := pod.Spec.SchedulingGates; len(gates) > 0 {
		names := make([]string, len(gates))
		for i, g := range gates {
			names[i] = g.Name
		}
		out = append(out, fmt.Sprintf("the pod has schedulingGates (%s): kube-scheduler does not try it until every gate is removed", strings.Join(names, ", ")))
	}
	if n := pod.Status.NominatedNodeName; n != "" {
		out = append(out, fmt.Sprintf("kube-scheduler nominated node %s (status.nominatedNodeName): it preempted pods there and waits for them to leave", n))
	}
	failed := 0
	for _, e := range events {
		if e.Reason == "FailedScheduling" || e.Reason == "FilteringFailed" {
			failed++
		}
	}
	sched := v.Scheduler
	if sched == "" {
		sched = pod.Spec.SchedulerName
	}
	if failed == 0 && len(pod.Spec.SchedulingGates) == 0 {
		switch {
		case seen.Known && !seen.Seen:
			out = append(out, fmt.Sprintf("no FailedScheduling event, and no scheduler named %s is seen (no held leader Lease %s, no running pod of it): is it running, and is spec.schedulerName right?",
				sched, strings.Join(SchedulerLeases(sched), " or ")))
		case !seen.Known:
			out = append(out, fmt.Sprintf("no FailedScheduling event; whether a scheduler named %s runs cannot be told from this snapshot (no Leases, no kube-system pods)", sched))
		default:
			out = append(out, fmt.Sprintf("no FailedScheduling event; %s is running (%s)", sched, seen.How))
		}
	}
	if t := pod.CreationTimestamp.Time; !t.IsZero() && !now.IsZero() && now.Sub(t) < YoungPod && now.Sub(t) >= 0 {
		out = append(out, fmt.Sprintf("the pod is %s old: the scheduler may not have tried it yet", now.Sub(t).Round(time.Second)))
	}
	return out
}
