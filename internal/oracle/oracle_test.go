package oracle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/cli"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// worldsInTest is how many worlds `make test` runs (WORLDS overrides; `make soak-oracle` runs many more).
const worldsInTest = 25

// known lists the disagreement classes that do not fail the test, each with why. It is empty: since the webhook
// follows HAMi v2.10.0's admission rules (issue 27), seeds 1-150 agree on every pod. A class that truly depends on
// state a snapshot cannot hold would be listed here with that reason; any other class fails the test.
var known = map[string]string{}

// TestOracle is the differential test of docs/engine.md ("The real scheduler as the oracle"): generated worlds
// with kube-scheduler's own constraints on the real control plane of deploy/extender; every pending pod, created
// alone, lands or stays Pending as what-if's verdict on the same live state says, on a node of its feasible set
// (the node itself where only one is feasible), and kube-scheduler's own feasible nodes and FailedScheduling
// reasons are the verdict's. ORACLE_REPORT=1 prints the table of disagreements and never fails.
func TestOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	first, n := worldgen.Seeds(worldsInTest)
	reportOnly := os.Getenv("ORACLE_REPORT") != ""
	// The control plane's logs are dumped when the harness fails, not for the engine's disagreements.
	quiet := &quietTB{TB: t}
	p := startPlane(quiet)
	ctx := context.Background()
	for _, ns := range []string{"team-a", "team-b"} {
		_, err := p.env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		must(t, err)
	}
	r := newReport(p.deployed)
	began := time.Now()
	for seed := first; seed < first+uint64(n); seed++ {
		p.runWorld(t, seed, r)
		if t.Failed() {
			t.Fatalf("seed %d: the harness failed; rerun with WORLD_SEED=%d WORLDS=1", seed, seed)
		}
	}
	table := r.table(first, n, time.Since(began))
	t.Log("\n" + table)
	if path := os.Getenv("ORACLE_REPORT_FILE"); path != "" {
		must(t, os.WriteFile(path, []byte(table), 0o644))
	}
	if r.pods == 0 {
		t.Fatal("no pending pod in any world: the generator is broken")
	}
	if reportOnly {
		return
	}
	quiet.asserting = true
	for _, c := range r.sortedClasses(r.verdict) {
		if _, ok := known[c.name]; !ok {
			t.Errorf("what-if disagrees with kube-scheduler (%d pods): %s\n  e.g. %s", c.count, c.name, c.example)
		}
	}
}

// quietTB is the test, except that once the disagreements are asserted a failure no longer counts as the
// harness's: testenv then keeps the process logs to itself.
type quietTB struct {
	testing.TB
	asserting bool
}

func (q *quietTB) Failed() bool { return q.TB.Failed() && !q.asserting }

// outcome is what the real control plane did with a pod.
type outcome struct {
	refused string // the API server refused the create (the webhook's denial)
	node    string // bound here
	pending string // PodScheduled=False/Unschedulable with this message
	timeout bool
	sched   string      // spec.schedulerName as admitted (the webhook sends HAMi's pods to HAMi's profile)
	filter  *filterCall // the extender's last /filter exchange, for HAMi's pods that reached it
}

// prediction is one predictor's answer for a pod: what-if's verdict as it is, or (for the report only) the
// verdict with kube-scheduler's checks as what-if prints them beside it.
type prediction struct {
	refused  bool
	fits     bool
	feasible []string
	node     string            // the verdict's placement, when it has one
	reasons  map[string]int    // FailedScheduling's reason counts this predictor expects when nothing fits
	code     map[string]string // per node, why it does not fit
	routing  string
	open     bool              // fits, but names no feasible node (a pod without a HAMi request)
	kube     map[string]string // per node, the first kube-scheduler check what-if prints as failing
}

func (p *plane) runWorld(t *testing.T, seed uint64, r *report) {
	t.Helper()
	ctx := context.Background()
	c := p.env.Client
	w := worldgen.World(seed, worldgen.Options{Kube: true})
	clearWorld(t, c)
	for _, n := range w.Nodes {
		createNode(t, c, n.DeepCopy())
	}
	for _, q := range w.Quotas {
		q = q.DeepCopy()
		q.ResourceVersion, q.UID = "", ""
		_, err := c.CoreV1().ResourceQuotas(q.Namespace).Create(ctx, q, metav1.CreateOptions{})
		must(t, err)
	}
	var pending []*corev1.Pod
	for _, pod := range w.Pods.Slice() {
		if pod.Spec.NodeName == "" {
			pending = append(pending, pod)
			continue
		}
		// A running pod was admitted long ago: keep the webhook off it (the shipped objectSelector's label).
		live := livePod(pod)
		live.Labels["hami.io/webhook"] = "ignore"
		got, err := c.CoreV1().Pods(live.Namespace).Create(ctx, live, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("seed %d: running pod %s/%s: %v", seed, pod.Namespace, pod.Name, err)
		}
		got.Status.Phase = pod.Status.Phase
		if _, err := c.CoreV1().Pods(got.Namespace).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("seed %d: running pod %s/%s status: %v", seed, pod.Namespace, pod.Name, err)
		}
	}
	settle()
	size := len(w.Nodes) + w.Pods.Len()
	for _, pod := range pending {
		live := livePod(pod)
		key := live.Namespace + "/" + live.Name
		wi, err := p.whatIf(t, live)
		if err != nil {
			r.add(seed, size, key, "what-if failed: "+firstLine(err.Error()), describe(w, pod, nil, outcome{}))
			continue
		}
		o := p.create(t, live)
		preds := map[string]prediction{"verdict": fromVerdict(wi, false), "verdict+kube": fromVerdict(wi, true)}
		r.pods++
		ex := describe(w, pod, wi, o)
		// The webhook sends a pod of the default scheduler that asks for HAMi's resources to HAMi's profile; where
		// what-if judged it for the scheduler it names, its classes are kept apart.
		rerouted := wi.Verdict.NotHAMi && o.sched != "" && o.sched != wi.Verdict.Scheduler
		for name, pr := range preds {
			classes := compare(pr, o, len(w.Nodes))
			if rerouted {
				for i := range classes {
					classes[i] = "[webhook: " + schedName(live.Spec.SchedulerName) + " -> " + o.sched + ", what-if judges it for " + wi.Verdict.Scheduler + "] " + classes[i]
				}
			}
			if name == "verdict" {
				r.addAll(r.verdict, r.verdictPods, seed, size, key, classes, ex)
			} else {
				r.addAll(r.combined, r.combinedPods, seed, size, key, classes, ex)
			}
		}
		p.after(t, live, o)
	}
}

// settle gives the informers of the extender and the schedulers a moment to see the last writes.
func settle() { time.Sleep(250 * time.Millisecond) }

func schedName(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func livePod(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	p.UID, p.ResourceVersion = "", ""
	p.CreationTimestamp = metav1.Time{}
	p.Status = corev1.PodStatus{}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	return p
}

// clearWorld deletes the last world's pods, quotas and nodes (namespaces stay: nothing here would finalize them).
func clearWorld(t testing.TB, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	now := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	for _, ns := range []string{"team-a", "team-b", "default"} {
		must(t, c.CoreV1().Pods(ns).DeleteCollection(ctx, now, metav1.ListOptions{}))
		must(t, c.CoreV1().ResourceQuotas(ns).DeleteCollection(ctx, now, metav1.ListOptions{}))
	}
	must(t, c.CoreV1().Nodes().DeleteCollection(ctx, now, metav1.ListOptions{}))
	waitFor(t, 30*time.Second, "the last world deleted", func() error {
		pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if n := len(pods.Items) + len(nodes.Items); n > 0 {
			return fmt.Errorf("%d pods and nodes left", n)
		}
		return nil
	})
}

func createNode(t testing.TB, c kubernetes.Interface, n *corev1.Node) {
	t.Helper()
	ctx := context.Background()
	status := n.Status
	n.ResourceVersion, n.UID = "", ""
	got, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node %s: %v", n.Name, err)
	}
	got.Status = status
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("node %s status: %v", n.Name, err)
	}
}

// whatIf runs `kubectl hami what-if -f POD -o json` in-process against the live API server.
func (p *plane) whatIf(t testing.TB, pod *corev1.Pod) (*cli.WhatIf, error) {
	t.Helper()
	pod = pod.DeepCopy()
	pod.APIVersion, pod.Kind = "v1", "Pod"
	y, err := yaml.Marshal(pod)
	must(t, err)
	path := filepath.Join(t.TempDir(), "pod.yaml")
	must(t, os.WriteFile(path, y, 0o600))
	var out, errOut bytes.Buffer
	root := cli.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs([]string{"what-if", "-f", path, "-o", "json", "-n", pod.Namespace, "--kubeconfig", p.env.Kubeconfig})
	if err := root.Execute(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, errOut.String())
	}
	var wi cli.WhatIf
	if err := json.Unmarshal(out.Bytes(), &wi); err != nil {
		return nil, fmt.Errorf("what-if -o json: %v", err)
	}
	if wi.Verdict == nil {
		return nil, fmt.Errorf("what-if -o json: no verdict")
	}
	return &wi, nil
}

var unschedulableWait = 20 * time.Second

// create creates the pod and waits until kube-scheduler binds it or marks it Unschedulable.
func (p *plane) create(t testing.TB, pod *corev1.Pod) outcome {
	t.Helper()
	ctx := context.Background()
	c := p.env.Client
	key := pod.Namespace + "/" + pod.Name
	p.filters.take(key)
	if _, err := c.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return outcome{refused: err.Error()}
	}
	var o outcome
	deadline := time.Now().Add(unschedulableWait)
	for {
		got, err := c.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		must(t, err)
		o.sched = got.Spec.SchedulerName
		if got.Spec.NodeName != "" {
			o.node = got.Spec.NodeName
			break
		}
		if msg, ok := unschedulable(got); ok {
			o.pending = msg
			break
		}
		if time.Now().After(deadline) {
			o.timeout = true
			for _, cond := range got.Status.Conditions {
				if cond.Type == corev1.PodScheduled {
					o.pending = cond.Reason + ": " + cond.Message // not Unschedulable: a bind error, retried
				}
			}
			break
		}
		time.Sleep(30 * time.Millisecond)
	}
	if fc, ok := p.filters.take(key); ok {
		o.filter = &fc
	}
	return o
}

func unschedulable(p *corev1.Pod) (string, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message, true
		}
	}
	return "", false
}

// after moves the world on: a pod HAMi bound gets what the device plugin does on the node (bind-phase success,
// the node lock released), so it holds its devices and the next bind may use the node; a pending pod is deleted.
func (p *plane) after(t testing.TB, pod *corev1.Pod, o outcome) {
	t.Helper()
	ctx := context.Background()
	c := p.env.Client
	switch {
	case o.refused != "":
		return
	case o.node == "":
		err := c.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	default:
		got, err := c.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		must(t, err)
		if got.Annotations[codec.PodBindPhaseAnnotation] == "" {
			break
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, codec.PodBindPhaseAnnotation, codec.BindPhaseSuccess)
		_, err = c.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		must(t, err)
		patch = fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, codec.NodeLockAnnotation)
		_, err = c.CoreV1().Nodes().Patch(ctx, o.node, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		must(t, err)
	}
	settle()
}

// fromVerdict reads a predictor from what-if's answer. With kube, a node also needs kube-scheduler's checks as
// what-if prints them (WhatIf.Kubernetes), and fails with their reasons first (kube-scheduler filters first).
func fromVerdict(wi *cli.WhatIf, kube bool) prediction {
	v := wi.Verdict
	pr := prediction{refused: wi.Refusal != nil, reasons: map[string]int{}, code: map[string]string{}, routing: v.Routing, kube: map[string]string{}}
	for _, nr := range wi.Kubernetes {
		if len(nr.Failures) > 0 {
			pr.kube[nr.Node] = nr.Failures[0].Reason
		}
	}
	kf := map[string][]string{}
	if kube {
		for _, nr := range wi.Kubernetes {
			for _, f := range nr.Failures {
				if len(nr.Failures) > 0 && f.Check != nr.Failures[0].Check {
					continue // kube-scheduler stops at a node's first failing plugin
				}
				kf[nr.Node] = append(kf[nr.Node], f.Reason)
			}
		}
	}
	for _, ns := range v.Nodes() {
		if r, ok := kf[ns.Node]; ok {
			for _, x := range r {
				pr.reasons[x]++
			}
			pr.code[ns.Node] = "kube: " + strings.Join(r, "; ")
			continue
		}
		if ns.Fits {
			continue
		}
		reason := ns.Reason
		if reason == "" {
			reason = string(ns.Code)
		}
		if engine.IsKubeCheck(ns.Code) {
			// One kube-scheduler plugin may give a node several reasons ("Insufficient cpu, Insufficient
			// memory"); FailedScheduling counts each.
			for _, r := range strings.Split(reason, ", ") {
				pr.reasons[r]++
			}
		} else {
			pr.reasons[reason]++
		}
		pr.code[ns.Node] = string(ns.Code)
	}
	for _, n := range v.Feasible() {
		if _, out := kf[n]; !out {
			pr.feasible = append(pr.feasible, n)
		}
	}
	if kube && v.Fits && len(v.Feasible()) == 0 {
		// No HAMi request: the verdict lists no nodes; kube-scheduler's checks alone decide.
		for _, nr := range wi.Kubernetes {
			if len(nr.Failures) == 0 {
				pr.feasible = append(pr.feasible, nr.Node)
			}
		}
	}
	pr.fits = v.Fits && (!kube || len(pr.feasible) > 0)
	pr.open = v.Fits && len(v.Feasible()) == 0 && len(pr.feasible) == 0
	if pr.fits && v.Placement != nil && slices.Contains(pr.feasible, v.Placement.Node) {
		pr.node = v.Placement.Node
	}
	return pr
}

// compare names every way the prediction and the outcome disagree (none: they agree).
func compare(pr prediction, o outcome, nodes int) []string {
	var out []string
	switch {
	case o.refused != "" && !pr.refused:
		return []string{"the API server refuses the pod (webhook), what-if has no refusal"}
	case o.refused != "":
		return nil
	case pr.refused:
		out = append(out, "what-if says the webhook refuses the pod, the API server admits it")
	}
	if o.timeout {
		return append(out, fmt.Sprintf("neither bound nor Unschedulable within %s", unschedulableWait))
	}
	switch {
	case pr.fits && o.node == "":
		for _, r := range normSet(parseReasons(o.pending)) {
			out = append(out, "what-if fits, kube-scheduler leaves it Pending; its reasons include: "+r)
		}
		return out
	case !pr.fits && o.node != "":
		why := pr.code[o.node]
		if pr.routing != "" {
			why = "routing: " + normRouting(pr.routing)
		}
		return append(out, "what-if does not fit, kube-scheduler binds it (what-if on that node: "+normReason(why)+")")
	case !pr.fits:
		kube := parseReasons(o.pending)
		if total := totalNodes(o.pending); total != nodes {
			out = append(out, fmt.Sprintf("FailedScheduling counts %d nodes of %d", total, nodes))
		}
		if !sameCounts(kube, pr.reasons) {
			onlyKube, onlyWI := diffSets(normSet(kube), normSet(pr.reasons))
			for _, r := range onlyKube {
				out = append(out, "both Pending; kube-scheduler says, what-if does not: "+r)
			}
			for _, r := range onlyWI {
				out = append(out, "both Pending; what-if says, kube-scheduler does not: "+r)
			}
			if len(onlyKube)+len(onlyWI) == 0 {
				out = append(out, "both Pending, same reasons on other numbers of nodes")
			}
		}
		return out
	}
	// Both fit: the node is one of what-if's, and where only one is feasible, that one.
	if pr.open {
		return append(out, "what-if fits but names no feasible node (the pod asks for no HAMi resource); kube-scheduler binds it")
	}
	if !slices.Contains(pr.feasible, o.node) {
		out = append(out, "bound to a node what-if finds infeasible (what-if on that node: "+normReason(pr.code[o.node])+")")
	} else if len(pr.feasible) == 1 && pr.node != "" && pr.node != o.node {
		out = append(out, "one feasible node, bound to another")
	}
	if f := o.filter; f != nil {
		for _, n := range pr.feasible {
			switch {
			case !slices.Contains(f.Sent, n):
				says := "pass"
				if r, ok := pr.kube[n]; ok {
					says = normReason(r)
				}
				out = append(out, "what-if feasible node excluded by kube-scheduler's own filters (what-if's kube checks on it: "+says+")")
			case !slices.Contains(f.Kept, n):
				out = append(out, "what-if feasible node refused by the extender's /filter: "+normReason(f.Failed[n]))
			}
		}
		for _, n := range f.Kept {
			if !slices.Contains(pr.feasible, n) {
				out = append(out, "kube-scheduler+extender feasible node what-if excludes (what-if: "+normReason(pr.code[n])+")")
			}
		}
		if len(f.Kept) == 1 && pr.node != "" && pr.node != f.Kept[0] {
			out = append(out, "one feasible node (kube-scheduler+extender), what-if places elsewhere")
		}
	}
	return dedupe(out)
}

var (
	itemStart   = regexp.MustCompile(`(?:^|, )(\d+) `)
	availableRe = regexp.MustCompile(`^0/(\d+) nodes are available`)
	braces      = regexp.MustCompile(`\{[^}]*\}`)
	fractions   = regexp.MustCompile(`\d+/\d+ `)
	numbers     = regexp.MustCompile(`\b\d+\b`)
)

// parseReasons reads "0/N nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated taint {a: b}. preemption:
// ..." into its reason counts. A HAMi reason holds ", " itself ("1/4 CardInsufficientMemory, 3/4 ..."): an item
// starts only where a count is followed by a space.
func parseReasons(msg string) map[string]int {
	out := map[string]int{}
	_, rest, ok := strings.Cut(msg, "nodes are available: ")
	if !ok {
		if msg != "" {
			out[msg]++
		}
		return out
	}
	rest, _, _ = strings.Cut(rest, ". preemption:")
	rest = strings.TrimSuffix(strings.TrimSpace(rest), ".")
	idx := itemStart.FindAllStringSubmatchIndex(rest, -1)
	for i, m := range idx {
		end := len(rest)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		var n int
		fmt.Sscan(rest[m[2]:m[3]], &n)
		reason := rest[m[1]:end]
		if code, ok := hamiWords[reason]; ok {
			reason = code
		}
		out[reason] += n
	}
	return out
}

func totalNodes(msg string) int {
	m := availableRe.FindStringSubmatch(msg)
	if m == nil {
		return -1
	}
	var n int
	fmt.Sscan(m[1], &n)
	return n
}

// hamiWords are reasons serve-extender's /filter gives in HAMi v2.10.0's own words (kube-scheduler's message
// carries them) where the commands name the gate's code: the same reason.
var hamiWords = map[string]string{"node unregistered": "NodeUnregistered"}

// normReason makes a reason a class name: no counts, no taint or value details.
func normReason(r string) string {
	r = braces.ReplaceAllString(r, "{…}")
	r = fractions.ReplaceAllString(r, "")
	r = numbers.ReplaceAllString(r, "N")
	if r == "" {
		return "(none)"
	}
	return r
}

func normRouting(r string) string {
	code, _, _ := strings.Cut(r, ":")
	return code
}

func normSet(m map[string]int) []string {
	set := map[string]bool{}
	for k := range m {
		for _, part := range strings.Split(normReason(k), ", ") { // a HAMi reason lists its GPU codes
			set[part] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func diffSets(a, b []string) (onlyA, onlyB []string) {
	for _, x := range a {
		if !slices.Contains(b, x) {
			onlyA = append(onlyA, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			onlyB = append(onlyB, x)
		}
	}
	return onlyA, onlyB
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// describe is a disagreement's example: the pod, its world's nodes, what-if's answer and the control plane's.
func describe(w *snapshot.Snapshot, pod *corev1.Pod, wi *cli.WhatIf, o outcome) string {
	var b strings.Builder
	sched := pod.Spec.SchedulerName
	if sched == "" {
		sched = `"" (default-scheduler)`
	}
	fmt.Fprintf(&b, "pod %s/%s scheduler %s", pod.Namespace, pod.Name, sched)
	var cpu, mem int64
	for _, c := range pod.Spec.Containers {
		cpu += c.Resources.Limits.Cpu().MilliValue()
		mem += c.Resources.Limits.Memory().Value() >> 30
	}
	var dev []string
	for _, c := range pod.Spec.Containers {
		for k, q := range c.Resources.Limits {
			if k != corev1.ResourceCPU && k != corev1.ResourceMemory {
				dev = append(dev, fmt.Sprintf("%s=%s", k, q.String()))
			}
		}
	}
	sort.Strings(dev)
	fmt.Fprintf(&b, " limits cpu %dm mem %dGi %s", cpu, mem, strings.Join(dev, " "))
	if len(pod.Spec.NodeSelector) > 0 {
		fmt.Fprintf(&b, "; nodeSelector %v", pod.Spec.NodeSelector)
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		var terms []string
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			var exprs []string
			for _, e := range term.MatchExpressions {
				exprs = append(exprs, fmt.Sprintf("%s %s %v", e.Key, e.Operator, e.Values))
			}
			terms = append(terms, strings.Join(exprs, " && "))
		}
		fmt.Fprintf(&b, "; required affinity (%s)", strings.Join(terms, ") || ("))
	}
	if len(pod.Spec.Tolerations) > 0 {
		var tols []string
		for _, tol := range pod.Spec.Tolerations {
			tols = append(tols, fmt.Sprintf("%s %s %s:%s", tol.Key, tol.Operator, tol.Value, tol.Effect))
		}
		fmt.Fprintf(&b, "; tolerations [%s]", strings.Join(tols, ", "))
	}
	b.WriteString("\n      nodes:")
	for _, n := range w.Nodes {
		fmt.Fprintf(&b, " %s(", n.Name)
		var attrs []string
		if n.Spec.Unschedulable {
			attrs = append(attrs, "cordoned")
		}
		for _, tt := range n.Spec.Taints {
			attrs = append(attrs, fmt.Sprintf("%s=%s:%s", tt.Key, tt.Value, tt.Effect))
		}
		a := n.Status.Allocatable
		attrs = append(attrs, fmt.Sprintf("%s pool=%s cpu=%s mem=%s pods=%s", n.Labels[worldgen.ZoneLabel], n.Labels["pool"], a.Cpu().String(), a.Memory().String(), a.Pods().String()))
		b.WriteString(strings.Join(attrs, " ") + ")")
	}
	if wi != nil {
		v := wi.Verdict
		fmt.Fprintf(&b, "\n      what-if: fits=%v feasible=%v", v.Fits, v.Feasible())
		if v.Placement != nil {
			fmt.Fprintf(&b, " placement=%s", v.Placement.Node)
		}
		if wi.Refusal != nil {
			fmt.Fprintf(&b, " webhook refusal: %s", wi.Refusal.Message)
		}
		fmt.Fprintf(&b, "; %s", firstLine(v.Summary))
	}
	switch {
	case o.refused != "":
		fmt.Fprintf(&b, "\n      real: refused: %s", o.refused)
	case o.node != "":
		fmt.Fprintf(&b, "\n      real: admitted for %s, bound to %s", o.sched, o.node)
	case o.timeout:
		fmt.Fprintf(&b, "\n      real: admitted for %s, neither bound nor Unschedulable within %s; PodScheduled: %s", o.sched, unschedulableWait, o.pending)
	case o.pending != "":
		fmt.Fprintf(&b, "\n      real: admitted for %s, Pending: %s", o.sched, o.pending)
	}
	if f := o.filter; f != nil {
		fmt.Fprintf(&b, "; /filter sent %v, kept %v", f.Sent, f.Kept)
	}
	return b.String()
}

// report counts the disagreements by class, with the smallest world's example of each.
type report struct {
	deployed          string
	pods              int
	verdict, combined map[string]*class
	verdictPods       map[string]bool // pods with at least one disagreement
	combinedPods      map[string]bool
}

type class struct {
	name    string
	count   int
	size    int
	seed    uint64
	example string
}

func newReport(deployed string) *report {
	return &report{deployed: deployed, verdict: map[string]*class{}, combined: map[string]*class{},
		verdictPods: map[string]bool{}, combinedPods: map[string]bool{}}
}

// add counts a pod whose disagreement both predictors share (what-if itself failed).
func (r *report) add(seed uint64, size int, key, name, example string) {
	r.pods++
	r.addAll(r.verdict, r.verdictPods, seed, size, key, []string{name}, example)
	r.addAll(r.combined, r.combinedPods, seed, size, key, []string{name}, example)
}

func (r *report) addAll(m map[string]*class, pods map[string]bool, seed uint64, size int, key string, names []string, example string) {
	for _, name := range names {
		pods[fmt.Sprintf("%d/%s", seed, key)] = true
		c := m[name]
		if c == nil {
			c = &class{name: name, size: 1 << 30}
			m[name] = c
		}
		c.count++
		if size < c.size {
			c.size, c.seed = size, seed
			c.example = fmt.Sprintf("seed %d (%s): %s", seed, "WORLD_SEED="+fmt.Sprint(seed)+" WORLDS=1", example)
		}
	}
}

func (r *report) sortedClasses(m map[string]*class) []*class {
	var out []*class
	for _, c := range m {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].count != out[j].count {
			return out[i].count > out[j].count
		}
		return out[i].name < out[j].name
	})
	return out
}

func (r *report) table(first uint64, n int, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "oracle: %d worlds from seed %d, %d pending pods created one at a time, in %s\n", n, first, r.pods, took.Round(time.Second))
	fmt.Fprintf(&b, "control plane: %s\n", r.deployed)
	for _, part := range []struct {
		title string
		m     map[string]*class
		pods  map[string]bool
	}{
		{"what-if's verdict (asserted)", r.verdict, r.verdictPods},
		{"what-if's verdict with its kube-scheduler checks (WhatIf.kubernetes) applied first (informative)", r.combined, r.combinedPods},
	} {
		agree := r.pods - len(part.pods)
		pct := 0.0
		if r.pods > 0 {
			pct = 100 * float64(agree) / float64(r.pods)
		}
		fmt.Fprintf(&b, "\n== %s: %d of %d pods agree (%.1f %%)\n", part.title, agree, r.pods, pct)
		for _, c := range r.sortedClasses(part.m) {
			mark := ""
			if _, ok := known[c.name]; ok {
				mark = " [known]"
			}
			fmt.Fprintf(&b, "%5d  %s%s\n       e.g. %s\n", c.count, c.name, mark, c.example)
		}
	}
	return b.String()
}
