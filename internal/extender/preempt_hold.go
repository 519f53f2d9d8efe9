package extender

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// The hold: once kube-scheduler has preempted for a pod and nominated a node (status.nominatedNodeName), the
// GPUs its victims free are the nominee's. kube-scheduler counts nominated pods of equal or higher priority in
// its own filters (addNominatedPods) but not in the extender's, so without the hold a pod of lower priority
// arriving meanwhile could take the freed GPU share and leave the nominee pending again. The hold is derived
// from the informer's pods alone (a pending pod, its nomination and its priority), never from memory: it
// survives a restart or a leader change, and ends when the nominee binds or its nomination is cleared.

// A preemption's nomination reaches the extender through its informer, some time after kube-scheduler has made
// it: a pod filtered meanwhile would see no hold. So the preempt verb also holds the nodes it answered for the
// preemptor, for provisionalHold or until the informer shows the pod nominated, bound or gone: this short
// bridge alone lives in memory (a restart loses at most provisionalHold of it).
const provisionalHold = 30 * time.Second

type provisional struct {
	pod   *corev1.Pod
	nodes []string
	until time.Time
}

// holdProvisionally records the preempt verb's answer for the pod.
func (st *State) holdProvisionally(pod *corev1.Pod, nodes []string, now time.Time) {
	if len(nodes) == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.holdLocked(pod, nodes, now)
}

// holdLocked is holdProvisionally for callers that hold the writer lock.
func (st *State) holdLocked(pod *corev1.Pod, nodes []string, now time.Time) {
	if st.provisional == nil {
		st.provisional = map[string]provisional{}
	}
	st.provisional[pod.Namespace+"/"+pod.Name] = provisional{pod: pod, nodes: nodes, until: now.Add(provisionalHold)}
}

// provisionalOn lists the pods the preempt verb holds the node for, dropping the entries the informer has
// caught up with (the pod nominated, bound or deleted) or that expired. Callers hold the writer lock.
func (st *State) provisionalOn(node string, now time.Time) []*corev1.Pod {
	var out []*corev1.Pod
	for key, pv := range st.provisional {
		cur, ok := st.objects[key]
		if !ok || now.After(pv.until) || cur.Spec.NodeName != "" || cur.Status.NominatedNodeName != "" {
			delete(st.provisional, key)
			continue
		}
		for _, n := range pv.nodes {
			if n == node {
				out = append(out, pv.pod)
			}
		}
	}
	return out
}

// trackNomination records or forgets the pod as a nominee of its node.
func (st *State) trackNomination(p *corev1.Pod) {
	key := p.Namespace + "/" + p.Name
	st.untrackNomination(key)
	node := p.Status.NominatedNodeName
	if node == "" || p.Spec.NodeName != "" || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return
	}
	if st.nominated == nil {
		st.nominated = map[string]map[string]*corev1.Pod{}
	}
	if st.nominated[node] == nil {
		st.nominated[node] = map[string]*corev1.Pod{}
	}
	st.nominated[node][key] = p
}

func (st *State) untrackNomination(key string) {
	for node, pods := range st.nominated {
		if _, ok := pods[key]; ok {
			delete(pods, key)
			if len(pods) == 0 {
				delete(st.nominated, node)
			}
			return
		}
	}
}

// podPriority is spec.priority, which admission always sets; 0 without it.
func podPriority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// holdsAny reports whether any pod is nominated (or provisionally answered) to a node: heldNodes has work.
func (st *State) holdsAny() bool {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return len(st.nominated) > 0 || len(st.provisional) > 0
}

// heldNodes says, for each node in fits, whether the pod still fits there beside the pods nominated to it
// of equal or higher priority (placed there first, as kube-scheduler does for its own filters): the nodes
// where it does not, with the reason. The nominees are placed for the length of the check, under the writer
// lock, and taken out again.
func (st *State) heldNodes(pod *corev1.Pod, fits map[string]bool, now time.Time) map[string]string {
	st.mu.RLock()
	if len(st.nominated) == 0 && len(st.provisional) == 0 {
		st.mu.RUnlock()
		return nil
	}
	st.mu.RUnlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	key, prio := pod.Namespace+"/"+pod.Name, podPriority(pod)
	var out map[string]string
	for node := range fits {
		if !fits[node] {
			continue
		}
		var ahead []*corev1.Pod
		for k, q := range st.nominated[node] {
			if k != key && podPriority(q) >= prio {
				ahead = append(ahead, q)
			}
		}
		for _, q := range st.provisionalOn(node, now) {
			if q.Namespace+"/"+q.Name != key && podPriority(q) >= prio {
				ahead = append(ahead, q)
			}
		}
		if len(ahead) == 0 {
			continue
		}
		if why := st.fitsBeside(pod, node, ahead, now); why != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[node] = why
		}
	}
	return out
}

// fitsBeside places the nominees on the node, evaluates the pod there and restores the nominees as pending;
// "" when the pod still fits, else the reason. Callers hold the writer lock.
func (st *State) fitsBeside(pod *corev1.Pod, node string, nominees []*corev1.Pod, now time.Time) string {
	c := st.cluster
	opts := engine.EvalOptions{Now: now, Nodes: []string{node}, Kube: engine.KubeOff, Unranked: true}
	var placed []*corev1.Pod
	for _, q := range nominees {
		v := c.Evaluate(q, opts)
		if !v.Fits || v.Placement == nil {
			continue // it does not fit there itself (yet): it holds nothing the pod could take
		}
		p := q.DeepCopy()
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		for k, val := range v.Placement.Annotations(now) {
			p.Annotations[k] = val
		}
		p.Spec.NodeName = node
		c.SetPod(p)
		placed = append(placed, q)
	}
	defer func() {
		for _, q := range placed {
			c.SetPod(q) // pending again: it counts nothing
		}
	}()
	if len(placed) == 0 || c.Evaluate(pod, opts).Fits {
		return ""
	}
	q := placed[0]
	return fmt.Sprintf("its GPUs are held for pod %s/%s (priority %d), nominated to this node after preempting for it", q.Namespace, q.Name, podPriority(q))
}
