package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// shrink makes each class's example smaller: it drops nodes (with their pods), running pods, quotas, pending
// containers and pending annotations one at a time, keeping a removal while the scenario still shows the
// class. Each try runs both sides again.
func (st *stats) shrink(cfgPath, kh, devCfg, work string, rescore int) {
	// The most frequent classes first, within a budget for the batch.
	var order []string
	for class := range st.classes {
		order = append(order, class)
	}
	sort.Slice(order, func(i, j int) bool { return st.classes[order[i]].count > st.classes[order[j]].count })
	budget := maxShrinkBatch
	for _, class := range order {
		e := st.classes[class]
		if strings.HasPrefix(class, "harness:") || class == unregisteredClass || budget <= 0 {
			continue
		}
		cur := e.s
		detail := e.detail
		tries := 0
		for changed := true; changed && tries < maxShrinkTries; {
			changed = false
			for _, cand := range smaller(cur) {
				if tries++; tries > maxShrinkTries || budget <= 0 {
					break
				}
				budget--
				ok, d := st.shows(cand, class, cfgPath, kh, devCfg, work, rescore)
				if ok {
					cur, detail, changed = cand, d, true
					break
				}
			}
		}
		if cur != e.s {
			e.s, e.detail, e.shrunk = cur, detail, true
		}
	}
}

// maxShrinkTries bounds the runs spent on one class, maxShrinkBatch those of a batch.
const (
	maxShrinkTries = 30
	maxShrinkBatch = 300
)

// unregisteredClass is the documented text difference of a node HAMi never registered: not shrunk.
const unregisteredClass = `reason: HAMi "node unregistered", kubectl-hami "NodeUnregistered"`

// shows runs s on both sides and says whether it has class, with the class's detail.
func (st *stats) shows(s *scenario, class, cfgPath, kh, devCfg, work string, rescore int) (bool, string) {
	h, err := runHAMi(s, cfgPath, rescore)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shrink:", err)
		return false, ""
	}
	p, err := runProject(s, kh, devCfg, work)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shrink:", err)
		return false, ""
	}
	t := newStats()
	t.compare(s, h, p, false)
	if e, ok := t.classes[class]; ok {
		return true, e.detail
	}
	return false, ""
}

// smaller lists the scenarios one removal away from s.
func smaller(s *scenario) []*scenario {
	var out []*scenario
	for i, n := range s.Nodes {
		if len(s.Nodes) == 1 {
			break
		}
		c := *s
		c.Nodes = append(append([]*corev1.Node{}, s.Nodes[:i]...), s.Nodes[i+1:]...)
		c.Pods = nil
		for _, p := range s.Pods {
			if p.Spec.NodeName != n.Name {
				c.Pods = append(c.Pods, p)
			}
		}
		out = append(out, &c)
	}
	for i := range s.Pods {
		c := *s
		c.Pods = append(append([]*corev1.Pod{}, s.Pods[:i]...), s.Pods[i+1:]...)
		out = append(out, &c)
	}
	for i := range s.Quotas {
		c := *s
		c.Quotas = append(append([]*corev1.ResourceQuota{}, s.Quotas[:i]...), s.Quotas[i+1:]...)
		out = append(out, &c)
	}
	p := s.Pending
	if len(p.Spec.InitContainers) > 0 {
		c := *s
		c.Pending = p.DeepCopy()
		c.Pending.Spec.InitContainers = nil
		out = append(out, &c)
	}
	for i := range p.Spec.Containers {
		if len(p.Spec.Containers) == 1 {
			break
		}
		c := *s
		c.Pending = p.DeepCopy()
		c.Pending.Spec.Containers = append(c.Pending.Spec.Containers[:i:i], c.Pending.Spec.Containers[i+1:]...)
		out = append(out, &c)
	}
	for k := range p.Annotations {
		c := *s
		c.Pending = p.DeepCopy()
		delete(c.Pending.Annotations, k)
		out = append(out, &c)
	}
	return out
}
