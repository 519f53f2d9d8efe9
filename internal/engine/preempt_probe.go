package engine

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
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
	req, _ := parseRequest(pod, c.cfg, c.kinds)
	if req == nil || !req.WantsGPU() {
		return nil
	}
	self := c.pods[pod.Namespace+"/"+pod.Name].alloc
	f := newFitter(c, req, self, false)
	f.card, f.kube = c.cardStatus(pod), c.kubeGateFor(pod, opts.Kube)
	p := &Probe{c: c, f: f}
	if !opts.Now.IsZero() {
		unix := opts.Now.Unix()
		p.now = func() int64 { return unix }
	}
	return p
}

// Held is one counted pod of a node as a probe takes it off and puts it back, looked up once so that the
// victim search's many questions about the same node cost no map lookups.
type Held struct {
	alloc  *PodAllocation // its GPU usage; nil when it holds none there
	kube   kubefit.Amounts
	inKube bool // kube-scheduler's count of the node includes its requests
}

// Hold looks up the pods of these keys (namespace/name) on the node. A key of a pod not counted there, or of
// the probed pod itself (its old share is already left out), gives a Held that changes nothing.
func (p *Probe) Hold(node string, keys []string, into []Held) []Held {
	self := p.f.req.Namespace + "/" + p.f.req.Name
	into = into[:0]
	for _, key := range keys {
		var h Held
		if key != self {
			e := p.c.pods[key]
			if a := e.alloc; a != nil && a.Node == node {
				h.alloc = a
			}
			if e.kube.at != nil && e.kube.node() == node {
				h.kube, h.inKube = *e.kube.requests, true
			}
		}
		into = append(into, h)
	}
	return into
}

// FitsWithout reports whether the pod passes every gate on the node with the counted pods of these keys
// (namespace/name) gone. The cluster is as before when it returns.
func (p *Probe) FitsWithout(node string, gone []string) bool {
	return p.FitsWithoutHeld(node, p.Hold(node, gone, nil))
}

// FitsWithoutHeld is FitsWithout for pods looked up by Hold on the same node.
func (p *Probe) FitsWithoutHeld(node string, gone []Held) bool {
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
func (p *Probe) apply(n *Node, gone []Held, sign int) {
	c, q := p.c, &p.f.quota
	var u *kubefit.Usage // the node's kube-scheduler count, looked up on the first pod it includes
	for i := range gone {
		h := &gone[i]
		if a := h.alloc; a != nil {
			c.applyToNode(n, a, sign)
			if a.Namespace == p.f.req.Namespace {
				q.memUsed += int64(sign) * a.QuotaMem
				q.coresUsed += int64(sign) * a.QuotaCores
				for r, v := range a.VendorQuota() {
					if d := q.dev[r]; d != nil {
						d.used += int64(sign) * v
					}
				}
			}
		}
		if h.inKube {
			if u == nil {
				u = c.usageOf(n.Name)
			}
			if u != nil {
				u.Add(h.kube, sign)
			}
		}
	}
	if u != nil {
		c.requick(n.Name)
	}
}
