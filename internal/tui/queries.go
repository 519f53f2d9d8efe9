package tui

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/render"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// The questions the UI asks of the world: verdicts, the why-pending explanation, what-if. Each answers as the
// commands do, through the same queries (internal/query).

// verdicts evaluates the pending pods (those still there) against the current model. The lock is taken
// pod by pod, so that many pending pods never hold an update back.
func (w *world) verdicts(pending []*PendingView) map[string]*engine.Verdict {
	out := make(map[string]*engine.Verdict, len(pending))
	for _, p := range pending {
		w.mu.Lock()
		var pod *corev1.Pod
		if pv := w.pending[p.Key()]; pv != nil {
			pod = pv.Pod // the store's pod, already built
		} else {
			pod = w.pods.get(podKey{p.Namespace, p.Name}) // no longer waiting, still there
		}
		if pod != nil {
			out[p.Key()] = w.c.Evaluate(pod, engine.EvalOptions{Now: w.now()})
		}
		w.mu.Unlock()
	}
	return out
}

// explain is the why-pending answer of one pod (query.Explain, as the CLI builds it). events are the pod's
// events read live (nil: not read yet); a snapshot's are its own.
func (w *world) explain(ns, name string, events []*corev1.Event) (query.Explanation, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	pod := w.pods.get(podKey{ns, name})
	if pod == nil {
		return query.Explanation{}, false
	}
	in := query.ExplainInput{Pod: pod, Events: events, EventsRead: events != nil, Leases: w.leases, LeasesRead: w.leasesRead,
		Quotas: w.quotaList(ns), KubeChecks: w.kubeChecksLocked, Now: w.now()}
	if !w.live {
		// A snapshot holds every event it will ever have: no FailedScheduling event is an answer.
		s := snapshot.Snapshot{Events: w.events}
		in.Events, in.EventsRead = s.EventsFor(ns, name), true
	}
	in.Pods = w.pods.scan()
	return query.Explain(w.c, in), true
}

// kubeChecksLocked runs the standard node constraints kube-scheduler applies before HAMi (query.KubeChecks).
// The nodes and the pods bound to them are gathered again only after a change.
func (w *world) kubeChecksLocked(pod *corev1.Pod) []kubefit.NodeResult {
	if w.kubeDirty {
		w.kubeNodes = w.kubeNodes[:0]
		for _, n := range w.nodes {
			w.kubeNodes = append(w.kubeNodes, n)
		}
		sort.Slice(w.kubeNodes, func(i, j int) bool { return w.kubeNodes[i].Name < w.kubeNodes[j].Name })
		w.kubeByNode = w.pods.byNode()
		w.kubeDirty = false
	}
	return query.KubeChecks(pod, w.kubeNodes, w.kubeByNode.on, w.cfg)
}

// kubeUsedLocked is Kubernetes' ResourceQuota status.used of a namespace, as the commands show it.
func (w *world) kubeUsedLocked(ns string) map[string]string {
	return query.KubeQuotaUsed(w.quotaList(ns))[ns]
}

// whatIfAnswer is the what-if command's answer for a hypothetical pod: webhook changes, verdict, copies that fit.
type whatIfAnswer struct {
	Pod      *corev1.Pod
	Changes  []string
	Refusal  *engine.WebhookRefusal // HAMi's webhook would not create the pod
	Verdict  *engine.Verdict
	Capacity engine.Capacity
	Input    render.VerdictInput
	// Warnings name the pod's namespace, queue or card models that the cluster does not know while a close one
	// is known (names.go).
	Warnings []string
}

func (w *world) whatIf(pod *corev1.Pod) whatIfAnswer {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	q := query.WhatIf(w.c, w.cfg, pod, query.WhatIfOptions{Now: now, KubeChecks: w.kubeChecksLocked})
	p := q.Pod
	a := whatIfAnswer{Pod: p, Changes: q.Changes, Refusal: q.Refusal, Verdict: q.Verdict, Capacity: q.Capacity, Warnings: w.nameWarningsLocked(p)}
	a.Input = render.VerdictInput{Verdict: q.Verdict, Kube: q.Kube, KubeQuotaUsed: w.kubeUsedLocked(p.Namespace), Now: now}
	return a
}

// config is the engine configuration in use.
func (w *world) config() engine.Config {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cfg
}

// object is a copy of one of the cluster's objects as the world holds it now: kind "Node" (key: name), "Pod"
// (namespace/name), "ResourceQuota" (key: a namespace; every quota in it, sorted) or "Queue" (name); false
// when there is none.
func (w *world) object(kind, key string) ([]runtime.Object, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch kind {
	case "Node":
		if n := w.nodes[key]; n != nil {
			n = n.DeepCopy()
			n.APIVersion, n.Kind = "v1", "Node"
			return []runtime.Object{n}, true
		}
	case "Pod":
		if p := w.pods.get(splitKey(key)); p != nil {
			p = p.DeepCopy()
			p.APIVersion, p.Kind = "v1", "Pod"
			return []runtime.Object{p}, true
		}
	case "ResourceQuota":
		var out []runtime.Object
		qs := w.quotaList(key)
		sort.Slice(qs, func(i, j int) bool { return qs[i].Name < qs[j].Name })
		for _, q := range qs {
			q = q.DeepCopy()
			q.APIVersion, q.Kind = "v1", "ResourceQuota"
			out = append(out, q)
		}
		return out, len(out) > 0
	case "Queue":
		if q := w.queues[key]; q != nil {
			return []runtime.Object{q.DeepCopy()}, true
		}
	}
	return nil, false
}
