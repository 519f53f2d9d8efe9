package engine

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
)

// DefaultSchedulerName is the scheduler profile HAMi's chart installs and its webhook points GPU pods at.
const DefaultSchedulerName = "hami-scheduler"

// VolcanoSchedulerName is Volcano's scheduler, which enforces the queues' card quota.
const VolcanoSchedulerName = "volcano"

// Codes of the pods that HAMi does not schedule: kube-scheduler's filter plugin names, and the routing failure.
const (
	// SchedulerNotHAMi: the pod asks for HAMi's resources but is addressed to another scheduler, which does not
	// know them (HAMi's webhook did not route it).
	SchedulerNotHAMi  Code = "SchedulerNotHAMi"
	KubeNodeName      Code = Code(kubefit.CheckNodeName)
	KubeUnschedulable Code = Code(kubefit.CheckNodeUnschedulable)
	KubeNodeAffinity  Code = Code(kubefit.CheckNodeAffinity)
	KubeTaint         Code = Code(kubefit.CheckTaintToleration)
	KubeResourcesFit  Code = Code(kubefit.CheckNodeResourcesFit)
)

// schedulerOf names the scheduler that decides the pod and whether HAMi's gates apply. A pod without
// spec.schedulerName (the API server always sets one; hand-written snapshots may not) and every pod of a
// cluster whose Config names no profile (the extender's: kube-scheduler sends it only its own pods) are HAMi's.
func (c *Cluster) schedulerOf(pod *corev1.Pod) (string, bool) {
	name := pod.Spec.SchedulerName
	switch {
	case c.cfg.SchedulerName == "":
		if name == "" {
			return DefaultSchedulerName, true
		}
		return name, true
	case name == "" || name == c.cfg.SchedulerName:
		return c.cfg.SchedulerName, true
	}
	return name, false
}

// hamiOnlyResources lists the resources the pod asks for that only HAMi understands (memory, memory
// percentage, cores): no node advertises them, so another scheduler leaves the pod pending forever.
func hamiOnlyResources(pod *corev1.Pod, cfg Config) []string {
	seen := map[string]bool{}
	var out []string
	add := func(l corev1.ResourceList) {
		for _, n := range []string{cfg.ResourceMemoryName, cfg.ResourceMemoryPercentageName, cfg.ResourceCoreName} {
			if _, ok := l[corev1.ResourceName(n)]; ok && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			add(cs[i].Resources.Limits)
			add(cs[i].Resources.Requests)
		}
	}
	sort.Strings(out)
	return out
}

// kubeWorld is the part of the cluster kube-scheduler's standard checks read: the Node objects and the pods
// bound to each node. It is kept only when the Config names HAMi's profile (the CLI and the terminal UI).
type kubeWorld struct {
	nodes map[string]*corev1.Node
	bound map[string]map[string]*corev1.Pod // node -> namespace/name -> pod
	where map[string]string                 // namespace/name -> node
}

func (c *Cluster) trackKubeNode(n *corev1.Node) {
	if c.cfg.SchedulerName == "" {
		return
	}
	if c.kube.nodes == nil {
		c.kube.nodes = map[string]*corev1.Node{}
	}
	c.kube.nodes[n.Name] = n
}

func (c *Cluster) untrackKubeNode(name string) { delete(c.kube.nodes, name) }

func (c *Cluster) trackKubePod(pod *corev1.Pod) {
	if c.cfg.SchedulerName == "" {
		return
	}
	key := pod.Namespace + "/" + pod.Name
	c.untrackKubePod(key)
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return
	}
	if c.kube.bound == nil {
		c.kube.bound, c.kube.where = map[string]map[string]*corev1.Pod{}, map[string]string{}
	}
	if c.kube.bound[pod.Spec.NodeName] == nil {
		c.kube.bound[pod.Spec.NodeName] = map[string]*corev1.Pod{}
	}
	c.kube.bound[pod.Spec.NodeName][key] = pod
	c.kube.where[key] = pod.Spec.NodeName
}

func (c *Cluster) untrackKubePod(key string) {
	node, ok := c.kube.where[key]
	if !ok {
		return
	}
	delete(c.kube.where, key)
	delete(c.kube.bound[node], key)
	if len(c.kube.bound[node]) == 0 {
		delete(c.kube.bound, node)
	}
}

// evaluateOther answers for a pod another scheduler decides: kube-scheduler's standard checks on the nodes'
// allocatable (whole devices of NVIDIA's device plugin, MIG resources, CPU, memory, selectors, taints) and,
// for Volcano, the queue's card quota. HAMi chooses no GPU, so a fitting verdict has no Placement.
func (c *Cluster) evaluateOther(v *Verdict, pod *corev1.Pod, opts EvalOptions) *Verdict {
	nodes, names := c.nodeList, c.nodeNames
	if opts.Nodes != nil {
		nodes, names = c.subset(opts.Nodes)
	}
	v.NotHAMi = true
	pod = withDefaultRequests(pod)
	if v.Scheduler != VolcanoSchedulerName {
		v.Card = nil // only Volcano enforces the queues' card quota
	}
	kubeNodes := make([]*corev1.Node, len(names))
	podsByNode := map[string][]*corev1.Pod{}
	for i, name := range names {
		kubeNodes[i] = c.kube.nodes[name]
		if kubeNodes[i] == nil {
			kubeNodes[i] = &corev1.Node{}
			kubeNodes[i].Name = name
		}
		keys := make([]string, 0, len(c.kube.bound[name]))
		for k := range c.kube.bound[name] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			podsByNode[name] = append(podsByNode[name], c.kube.bound[name][k])
		}
	}
	results := kubefit.Check(pod, kubeNodes, podsByNode, nil)
	v.Nodes = make([]NodeStatus, len(nodes))
	counts := map[Code]int{}
	var order []Code
	var feasible []int
	models := modelChecks{}
	for i, n := range nodes {
		ns := &v.Nodes[i]
		ns.Node = names[i]
		var chk *Check
		if f := results[i].Failures; len(f) > 0 {
			var msgs []string
			for _, x := range f {
				msgs = append(msgs, x.Message)
			}
			chk = &Check{Gate: f[0].Check, Code: Code(f[0].Check), Detail: strings.Join(msgs, "; ")}
			ns.Reason = f[0].Reason
		} else if cc, rank := v.Card.gate(n, models); cc != nil {
			chk = cc
			ns.Reason = string(cc.Code)
		} else {
			ns.Fits, ns.CardRank, ns.Score = true, max(rank, 0), CardPreference(rank)
			feasible = append(feasible, i)
			continue
		}
		ns.Code, ns.Check = chk.Code, chk
		if counts[chk.Code] == 0 {
			order = append(order, chk.Code)
		}
		counts[chk.Code]++
	}
	for _, code := range order {
		v.Reasons = append(v.Reasons, ReasonCount{Code: code, Nodes: counts[code]})
	}
	sort.SliceStable(v.Reasons, func(i, j int) bool { return v.Reasons[i].Code < v.Reasons[j].Code })
	routing := ""
	if hami := hamiOnlyResources(pod, c.cfg); len(hami) > 0 {
		routing = fmt.Sprintf("the pod asks for HAMi's %s but spec.schedulerName is %s, not HAMi's %s: no other scheduler knows these resources, so no node ever fits",
			strings.Join(hami, ", "), v.Scheduler, c.cfg.SchedulerName)
		v.Explanation = append(v.Explanation, routing)
		v.Routing = fmt.Sprintf("%s: asks for HAMi's %s but is addressed to %s, not %s", SchedulerNotHAMi, strings.Join(hami, ", "), v.Scheduler, c.cfg.SchedulerName)
		v.Hints = append(v.Hints, fmt.Sprintf("HAMi's admission webhook did not route the pod (not installed, or failurePolicy: Ignore while the extender was down): check `kubectl get mutatingwebhookconfiguration` for HAMi's webhook, then recreate the pod, or set spec.schedulerName: %s in its template",
			c.cfg.SchedulerName))
	}
	if len(feasible) == 0 {
		v.Summary = summaryLine(len(nodes), v.Reasons)
		if routing != "" {
			v.Summary = "Not HAMi's pod: " + routing + ". " + v.Summary
		}
		for _, code := range order {
			for i := range v.Nodes {
				if ns := &v.Nodes[i]; ns.Code == code {
					v.Explanation = append(v.Explanation, fmt.Sprintf("%s on %d node(s), e.g. %s: %s", code, counts[code], ns.Node, checkDetail(ns.Check)))
					break
				}
			}
		}
		v.Hints = append(v.Hints, v.Card.hints()...)
		return v
	}
	v.Fits = true
	sort.SliceStable(feasible, func(a, b int) bool { return v.Nodes[feasible[a]].CardRank < v.Nodes[feasible[b]].CardRank })
	for _, i := range feasible {
		v.Feasible = append(v.Feasible, names[i])
	}
	what := "kube-scheduler's standard checks"
	if v.Card != nil && v.Card.Enforced {
		what += " and the queue's card quota"
	}
	v.Summary = fmt.Sprintf("%d/%d nodes pass %s; preferred: %s; %s places the pod, HAMi chooses no GPU for it",
		len(feasible), len(nodes), what, v.Feasible[0], v.Scheduler)
	return v
}

func checkDetail(c *Check) string {
	if c == nil {
		return ""
	}
	return c.Detail
}

// withDefaultRequests is the pod as the API server stores it: a container's limit stands for its missing
// request (kube-scheduler reads requests; hand-written snapshots often carry only limits).
func withDefaultRequests(pod *corev1.Pod) *corev1.Pod {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			for name := range cs[i].Resources.Limits {
				if _, ok := cs[i].Resources.Requests[name]; !ok {
					return fillRequests(pod.DeepCopy())
				}
			}
		}
	}
	return pod
}

func fillRequests(pod *corev1.Pod) *corev1.Pod {
	for _, cs := range []*[]corev1.Container{&pod.Spec.InitContainers, &pod.Spec.Containers} {
		for i := range *cs {
			c := &(*cs)[i]
			for name, q := range c.Resources.Limits {
				if _, ok := c.Resources.Requests[name]; !ok {
					if c.Resources.Requests == nil {
						c.Resources.Requests = corev1.ResourceList{}
					}
					c.Resources.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
	return pod
}
