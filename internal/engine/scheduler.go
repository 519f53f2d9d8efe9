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

// IsKubeCheck reports whether the code is one of kube-scheduler's own checks (a plugin name).
func IsKubeCheck(c Code) bool {
	switch c {
	case KubeNodeName, KubeUnschedulable, KubeNodeAffinity, KubeTaint, KubeResourcesFit:
		return true
	}
	return false
}

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

// kubeWorld is the part of the cluster kube-scheduler's standard checks read: the Node objects (always kept:
// the extender's bind checks the node's taints and labels). What the pods bound to each node request, when the
// Config names HAMi's profile (the CLI and the terminal UI), is kept in the node's record (nodeRecord.kube) and
// each pod's entry (podEntry.kube).
type kubeWorld struct {
	nodes map[string]*kubefit.Node
}

// kubePod is a bound pod as kube-scheduler's NodeResourcesFit counts it: the record of the node it is counted
// on (so removing it needs no lookup; nil when it is not counted), and its requests (shared by the pods whose
// requests SetPods read once; never changed).
type kubePod struct {
	at       *nodeRecord
	requests *kubefit.Amounts
}

// node is the name of the node the pod is counted on, "" when none.
func (kp *kubePod) node() string {
	if kp.at == nil {
		return ""
	}
	return kp.at.name
}

// usageOf is the node's kube usage (zero while no counted pod is bound to it), nil when the node has no record.
// A probe that takes a node's last bound pod off for a moment (Probe.apply) puts it back through the same usage.
func (c *Cluster) usageOf(name string) *kubefit.Usage {
	if r := c.records[name]; r != nil {
		return &r.kube
	}
	return nil
}

func (c *Cluster) trackKubeNode(n *corev1.Node, node *Node) {
	if c.kube.nodes == nil {
		c.kube.nodes = map[string]*kubefit.Node{}
	}
	kn := kubefit.NewNode(n)
	c.kube.nodes[n.Name] = kn
	node.kn = kn
	node.kq = kn.Quick(c.usageOf(n.Name))
}

// requick refreshes the node's Quick after its bound pods changed.
func (c *Cluster) requick(name string) {
	c.records[name].requick()
}

// requick refreshes the Quick of the record's node from the record's kube usage.
func (r *nodeRecord) requick() {
	if r == nil {
		return
	}
	if node := r.node; node != nil && node.kn != nil {
		node.kq = node.kn.Quick(r.kubeUsage())
	}
}

// kubeUsage is the record's bound pods as kube-scheduler counts them, nil when none is (or no record).
func (r *nodeRecord) kubeUsage() *kubefit.Usage {
	if r == nil || r.kube.Pods == 0 {
		return nil
	}
	return &r.kube
}

// trackKubePod counts a bound pod's requests on its node and says where it is counted (nothing when the
// cluster does not track kube-scheduler's counts or the pod does not count); the pod counts nothing yet
// (SetPod removed it first).
func (c *Cluster) trackKubePod(pod *corev1.Pod) kubePod {
	if c.cfg.SchedulerName == "" {
		return kubePod{}
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return kubePod{}
	}
	kp := kubePod{at: c.record(pod.Spec.NodeName), requests: c.readRequests(pod)}
	kp.at.kube.Add(*kp.requests, +1)
	if c.bulk == nil { // SetPods refreshes every node's Quick once, at its end
		kp.at.requick()
	}
	return kp
}

// untrackKubePod takes a pod's requests off the node it was counted on.
func (c *Cluster) untrackKubePod(kp *kubePod) {
	r := kp.at
	if r == nil {
		return
	}
	r.kube.Add(*kp.requests, -1)
	if r.kube.Pods > 0 {
		if c.bulk == nil {
			r.requick()
		}
		return
	}
	r.kube = kubefit.Usage{} // the next pod starts a new count, as the first did
	r.requick()
	c.dropIfEmpty(r)
}

// KubeScope says which of kube-scheduler's own checks an evaluation runs as gates of its verdict.
type KubeScope int

const (
	// KubeAuto is every check where the engine answers alone (Config.SchedulerName set: the commands and the
	// terminal UI), none for the extender's cluster.
	KubeAuto KubeScope = iota
	// KubeOff runs HAMi's gates only: the extender's /filter and /prioritize, whose nodes kube-scheduler has
	// already filtered (with the pods it assumed, which the extender cannot see).
	KubeOff
	// KubeStatic runs the checks that read the node object and the pod alone (NodeName, TaintToleration,
	// NodeAffinity): /bind's own check.
	KubeStatic
	// KubeAll runs every check the cluster can judge.
	KubeAll
)

// kubeGate is kube-scheduler's checks prepared for one evaluation.
type kubeGate struct {
	pod    *kubefit.Pod
	static bool
	self   kubePod // the evaluated pod where it is counted (its own requests leave its node)
	// copies are Capacity's copies placed so far per node, each taking the pod's requests.
	copies map[string]int
}

// kubeGateFor prepares the kube checks for a HAMi pod, or nil when the scope runs none.
func (c *Cluster) kubeGateFor(pod *corev1.Pod, scope KubeScope) *kubeGate {
	switch scope {
	case KubeOff:
		return nil
	case KubeAuto:
		if c.cfg.SchedulerName == "" {
			return nil
		}
		scope = KubeAll
	}
	pod = withDefaultRequests(pod)
	g := &kubeGate{pod: kubefit.Prepare(pod, c.cfg.ManagedResources()), static: scope == KubeStatic}
	g.self = c.pods[pod.Namespace+"/"+pod.Name].kube
	return g
}

// kubeUsage is the node's bound pods as the evaluated pod sees them.
func (c *Cluster) kubeUsage(g *kubeGate, node string) *kubefit.Usage {
	u := c.usageOf(node)
	if u == nil {
		u = &kubefit.Usage{}
	}
	if g == nil || g.self.node() != node && g.copies[node] == 0 {
		return u
	}
	cp := u.Clone() // the tracked usage is shared
	if g.self.at != nil && g.self.node() == node {
		cp.Add(*g.self.requests, -1)
	}
	for i := 0; i < g.copies[node]; i++ {
		cp.Add(g.pod.Amounts(), +1)
	}
	return &cp
}

// kubeNode is the node object kube-scheduler's checks read; a node known only by its name is an empty one.
func (c *Cluster) kubeNode(name string) *kubefit.Node {
	if n := c.kube.nodes[name]; n != nil {
		return n
	}
	n := &corev1.Node{}
	n.Name = name
	return kubefit.NewNode(n)
}

// passes is the common case's shortcut: the node surely passes kube-scheduler's checks, judged from the
// Quick kept on the engine's node (no node object read). false means run kubeCheck.
func (g *kubeGate) passes(n *Node) bool {
	return g.self.node() != n.Name && (g.copies == nil || g.copies[n.Name] == 0) && g.pod.QuickPass(&n.kq)
}

// check runs the gate on one node: nil when the node passes, else the node's check and kube-scheduler's
// reasons for it.
func (c *Cluster) kubeCheck(g *kubeGate, name string) (*Check, string) {
	f := g.pod.CheckNode(c.kubeNode(name), c.kubeUsage(g, name), g.static)
	if len(f) == 0 {
		return nil, ""
	}
	return kubeFailure(f)
}

// kubeFailure is the check and the reasons of a node's kube failures (the first check's decide the code).
func kubeFailure(f []kubefit.Failure) (*Check, string) {
	msgs := make([]string, 0, len(f))
	var reasons []string
	for _, x := range f {
		msgs = append(msgs, x.Message)
		if x.Check == f[0].Check {
			reasons = append(reasons, x.Reason)
		}
	}
	return &Check{Gate: f[0].Check, Code: Code(f[0].Check), Detail: strings.Join(msgs, "; ")}, strings.Join(reasons, ", ")
}

// kubeOnly judges a HAMi pod that asks for no GPU by kube-scheduler's checks alone: it fits where they pass.
func (c *Cluster) kubeOnly(v *Verdict, g *kubeGate, opts EvalOptions) {
	names := c.nodeNames
	if opts.Nodes != nil {
		_, names = c.subset(opts.Nodes)
	}
	v.nodes = make([]NodeStatus, len(names))
	counts := map[Code]int{}
	for i, name := range names {
		ns := &v.nodes[i]
		ns.Node = name
		chk, reason := c.kubeCheck(g, name)
		if chk == nil {
			ns.Fits = true
			v.feasible = append(v.feasible, name)
			continue
		}
		ns.Code, ns.Check, ns.Reason = chk.Code, chk, reason
		if counts[chk.Code] == 0 {
			v.Reasons = append(v.Reasons, ReasonCount{Code: chk.Code})
		}
		counts[chk.Code]++
	}
	for i := range v.Reasons {
		v.Reasons[i].Nodes = counts[v.Reasons[i].Code]
	}
	sort.SliceStable(v.Reasons, func(i, j int) bool { return v.Reasons[i].Code < v.Reasons[j].Code })
	if len(v.feasible) > 0 {
		v.Summary += fmt.Sprintf("; %d/%d nodes pass kube-scheduler's checks", len(v.feasible), len(names))
		return
	}
	v.Fits = false
	v.Summary = summaryLine(len(names), v.Reasons, v.nodes) + " The pod asks for no GPU resources that HAMi manages; kube-scheduler's own checks reject every node."
	for _, rc := range v.Reasons {
		for i := range v.nodes {
			if ns := &v.nodes[i]; ns.Code == rc.Code {
				v.Explanation = append(v.Explanation, fmt.Sprintf("%s on %d node(s), e.g. %s: %s", rc.Code, rc.Nodes, ns.Node, checkDetail(ns.Check)))
				break
			}
		}
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
	// Every check runs on every node: the detail lists all that stand in the way, the first decides.
	g := &kubeGate{pod: kubefit.Prepare(pod, nil), self: c.pods[pod.Namespace+"/"+pod.Name].kube}
	results := make([]kubefit.NodeResult, len(names))
	for i, name := range names {
		results[i] = kubefit.NodeResult{Node: name, Failures: g.pod.AllFailures(c.kubeNode(name), c.kubeUsage(g, name))}
	}
	v.nodes = make([]NodeStatus, len(nodes))
	counts := map[Code]int{}
	var order []Code
	var feasible []int
	models := modelChecks{}
	for i, n := range nodes {
		ns := &v.nodes[i]
		ns.Node = names[i]
		var chk *Check
		if f := results[i].Failures; len(f) > 0 {
			chk, ns.Reason = kubeFailure(f)
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
		v.Summary = summaryLine(len(nodes), v.Reasons, v.nodes)
		if routing != "" {
			v.Summary = "Not HAMi's pod: " + routing + ". " + v.Summary
		}
		for _, code := range order {
			for i := range v.nodes {
				if ns := &v.nodes[i]; ns.Code == code {
					v.Explanation = append(v.Explanation, fmt.Sprintf("%s on %d node(s), e.g. %s: %s", code, counts[code], ns.Node, checkDetail(ns.Check)))
					break
				}
			}
		}
		v.Hints = append(v.Hints, v.Card.hints()...)
		return v
	}
	v.Fits = true
	sort.SliceStable(feasible, func(a, b int) bool { return v.nodes[feasible[a]].CardRank < v.nodes[feasible[b]].CardRank })
	for _, i := range feasible {
		v.feasible = append(v.feasible, names[i])
	}
	what := "kube-scheduler's standard checks"
	if v.Card != nil && v.Card.Enforced {
		what += " and the queue's card quota"
	}
	v.Summary = fmt.Sprintf("%d/%d nodes pass %s; preferred: %s; the pod is %s's to place, HAMi chooses no GPU for it",
		len(feasible), len(nodes), what, v.feasible[0], v.Scheduler)
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

// WithDefaultRequests is the pod as the API server stores it, a container's limit standing for its missing
// request: what kube-scheduler's checks read, for the verdict's gates and for the per-node checks printed beside
// it (query.KubeChecks) alike.
func WithDefaultRequests(pod *corev1.Pod) *corev1.Pod { return withDefaultRequests(pod) }
