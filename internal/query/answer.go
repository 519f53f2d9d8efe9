package query

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
)

// WhatIfAnswer is what-if's answer for a pod not created yet, built once (WhatIf) for every surface: the CLI's
// text, -o json and -o yaml, and the UI's what-if form render it and compute nothing of their own.
type WhatIfAnswer struct {
	// Pod is the pod as the API server would create it: through HAMi's webhook (engine.NewPod).
	Pod *corev1.Pod
	// Changes are the webhook's changes, a line each.
	Changes []string
	// Refusal is set when HAMi's webhook would not create the pod at all.
	Refusal *engine.WebhookRefusal
	// Verdict is the engine's answer, its fixes proven.
	Verdict *engine.Verdict
	// Main is the verdict's main reason (engine.MainReason) when it does not fit.
	Main engine.ReasonCount
	// Capacity is how many copies fit now (none counted for a pod that asks for no GPU).
	Capacity engine.Capacity
	// Kube is kube-scheduler's own checks per node, every failing check listed.
	Kube []kubefit.NodeResult
}

// WhatIfOptions are what the surfaces may choose: the clock, the nodes shown GPU by GPU, and how kube-scheduler's
// per-node checks are read (each surface keeps its own node and pod lists; nil reads none).
type WhatIfOptions struct {
	Now         time.Time
	DetailNodes []string
	KubeChecks  func(*corev1.Pod) []kubefit.NodeResult
}

// WhatIf answers for a pod not created yet on the cluster c (whose Config is cfg).
func WhatIf(c *engine.Cluster, cfg engine.Config, pod *corev1.Pod, o WhatIfOptions) WhatIfAnswer {
	p, changes := engine.NewPod(pod, cfg)
	v := c.Evaluate(p, engine.EvalOptions{Now: o.Now, DetailNodes: o.DetailNodes})
	c.ProveFixes(p, v, engine.EvalOptions{Now: o.Now})
	a := WhatIfAnswer{Pod: p, Changes: changes, Refusal: c.WebhookRefusal(p), Verdict: v}
	if !v.Fits {
		a.Main = engine.MainReason(v)
	}
	if !v.NoGPURequest {
		a.Capacity = c.Capacity(p, MaxCopies)
	}
	if o.KubeChecks != nil {
		a.Kube = o.KubeChecks(p)
	}
	return a
}

// AllFit reports whether wanted copies of the pod would all be created and placed now: the webhook admits it,
// the verdict fits and, for a pod HAMi places GPUs for, that many copies fit (what-if --exit-code).
func (a *WhatIfAnswer) AllFit(wanted int) bool {
	v := a.Verdict
	return v.Fits && a.Refusal == nil && (v.NoGPURequest || v.NotHAMi || a.Capacity.Copies >= wanted)
}
