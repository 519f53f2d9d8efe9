package engine

import (
	corev1 "k8s.io/api/core/v1"
)

// Probe answers the question preemption's victim search asks thousands of times: would the pod pass every gate
// of one node (kube-scheduler's rows and HAMi's) if some of the pods counted there were gone? The request, the
// quota view and the kube checks are prepared once; each question costs one node's fit, with the pods' GPU
// usage, kube requests and namespace quota taken out for the length of the call and put back before it
// returns. Like ProveFixes it changes the cluster while it runs: not safe beside other evaluations of the same
// cluster (callers hold its writer lock, or own the cluster).
type Probe struct {
	c       *Cluster
	f       *fitter
	now     nowFunc
	scratch []GPUStatus
}

// NewProbe prepares the pod's gates, or returns nil for a pod whose fit the engine does not decide node by node
// here: another scheduler's, or one asking for no GPU HAMi manages (kube-scheduler's own preemption serves it).
func (c *Cluster) NewProbe(pod *corev1.Pod, opts EvalOptions) *Probe {
	if _, hami := c.schedulerOf(pod); !hami {
		return nil
	}
	req, _ := ParseRequest(pod, c.cfg)
	if req == nil || !req.WantsGPU() {
		return nil
	}
	self := c.pods[pod.Namespace+"/"+pod.Name]
	f := newFitter(c, req, self, false)
	f.card, f.kube = c.cardStatus(pod), c.kubeGateFor(pod, opts.Kube)
	p := &Probe{c: c, f: f}
	if !opts.Now.IsZero() {
		unix := opts.Now.Unix()
		p.now = func() int64 { return unix }
	}
	return p
}

// FitsWithout reports whether the pod passes every gate on the node with the counted pods of these keys
// (namespace/name) gone; keys of pods not counted on that node change nothing. The cluster is as before when
// it returns.
func (p *Probe) FitsWithout(node string, gone []string) bool {
	n := p.c.nodes[node]
	if n == nil {
		return false
	}
	p.apply(n, gone, -1)
	defer p.apply(n, gone, +1)
	if cap(p.scratch) < len(n.GPUs) {
		p.scratch = make([]GPUStatus, len(n.GPUs))
	}
	return p.f.fitNode(n, p.scratch[:len(n.GPUs)], p.now).ok
}

// apply takes the pods' usage off the node (sign -1) or puts it back (+1): their GPU shares, what
// kube-scheduler counts of their requests, and what they charge the evaluated pod's namespace quota.
func (p *Probe) apply(n *Node, keys []string, sign int) {
	c, q := p.c, &p.f.quota
	kubeChanged := false
	self := p.f.req.Namespace + "/" + p.f.req.Name
	for _, key := range keys {
		if key == self {
			continue // the pod's own old share is already left out of every number
		}
		if a := c.pods[key]; a != nil && a.Node == n.Name {
			c.applyToNode(n, a, sign)
			if a.Namespace == p.f.req.Namespace {
				q.memUsed += int64(sign) * a.QuotaMem
				q.coresUsed += int64(sign) * a.QuotaCores
				for r, v := range a.VendorQuota {
					if d := q.dev[r]; d != nil {
						d.used += int64(sign) * v
					}
				}
			}
		}
		if kp, ok := c.kube.where[key]; ok && kp.node == n.Name {
			if u := c.kube.usage[n.Name]; u != nil {
				u.Add(kp.requests, sign)
				kubeChanged = true
			}
		}
	}
	if kubeChanged {
		c.requick(n.Name)
	}
}
