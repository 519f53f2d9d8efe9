// Package familytest runs a family's Kinds through the engine for the family's own table tests: a one-node
// cluster that schedules the family's types beside NVIDIA's, counted pods on it, and a pod evaluated there,
// checked by the devices placed, HAMi's reason text and code, the explanation and the bind annotations.
// Only tests import it (a family package itself never imports the engine).
package familytest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// TestTime is the evaluation and bind time of the cases.
var TestTime = time.Unix(1_700_000_000, 0)

// Kinds is the family's Kinds with its chart defaults (a nil section), validated.
func Kinds(t testing.TB, f device.Family) []device.Kind {
	t.Helper()
	ks, err := f.Kinds(nil)
	if err != nil {
		t.Fatalf("%s: %v", f.Name(), err)
	}
	for i := range ks {
		if err := ks[i].Validate(); err != nil {
			t.Fatal(err)
		}
	}
	return ks
}

// World is a cluster scheduling NVIDIA and the given Kinds.
type World struct {
	C *engine.Cluster
}

// NewWorld builds the cluster with the nodes and counted pods; any problem they raise fails the test.
func NewWorld(t testing.TB, kinds []device.Kind, nodes []*corev1.Node, counted ...*corev1.Pod) *World {
	return newWorld(t, kinds, nodes, false, counted...)
}

func newWorld(t testing.TB, kinds []device.Kind, nodes []*corev1.Node, nodeProblems bool, counted ...*corev1.Pod) *World {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Vendors = kinds
	w := &World{C: engine.NewCluster(cfg)}
	for _, n := range nodes {
		if probs := w.C.SetNode(n); len(probs) != 0 && !nodeProblems {
			t.Fatalf("node %s: %v", n.Name, probs)
		}
	}
	for _, p := range counted {
		if probs := w.C.SetPod(p); len(probs) != 0 {
			t.Fatalf("pod %s: %v", p.Name, probs)
		}
	}
	return w
}

// Evaluate is the engine's verdict on p, with every device's gate results.
func (w *World) Evaluate(p *corev1.Pod) *engine.Verdict {
	return w.C.Evaluate(p, engine.EvalOptions{Now: TestTime, DetailAll: true})
}

// QuotaLine is namespace ns's quota line of resource ("limits.<name>"); the test fails when there is none.
func (w *World) QuotaLine(t testing.TB, ns, resource string) engine.QuotaLine {
	t.Helper()
	q := w.C.Quota(ns)
	for _, d := range q.Devices {
		if d.Resource == resource {
			return d
		}
	}
	t.Fatalf("no quota line for %s in namespace %s: %+v", resource, ns, q)
	return engine.QuotaLine{}
}

// Devices lists the UUIDs a fitting verdict places, container by container; nil for a pod that does not fit.
func Devices(v *engine.Verdict) [][]string {
	if !v.Fits || v.Placement == nil {
		return nil
	}
	var out [][]string
	for _, c := range v.Placement.Containers {
		var ids []string
		for _, d := range c.Devices {
			ids = append(ids, d.UUID)
		}
		out = append(out, ids)
	}
	return out
}

// Reason is the node's HAMi reason text ("1/2 CardInsufficientMemory, ..."), "" when it fits.
func Reason(v *engine.Verdict, node string) string {
	if s := v.NodeStatus(node); s != nil {
		return s.Reason
	}
	return ""
}

// Case is one row of a family's table test: a one-node world and a pod evaluated on it. Want says whether
// the pod fits; the other checks are optional ("" or nil checks nothing).
type Case struct {
	Name    string
	Node    *corev1.Node
	Counted []*corev1.Pod
	// NodeProblems lets the node raise problems (a node the family does not register).
	NodeProblems bool
	// Quota is a ResourceQuota of the pod's namespace ("ns"): hard limits by resource name.
	Quota map[string]string
	Pod   *corev1.Pod
	// Want are the devices placed, container by container; nil when the pod does not fit.
	Want [][]string
	// Reason is the node's HAMi reason text and Code the verdict's one reason, when the pod does not fit.
	Reason string
	Code   engine.Code
	// Explains is wanted in the explanation of a pod that does not fit.
	Explains string
	// Detail is wanted in some device's gate result on the node.
	Detail string
	// Annotations are bind annotations the placement must write (key: value); Absent must not be written.
	Annotations map[string]string
	Absent      []string
}

// Run evaluates every case on a cluster of kinds (and NVIDIA's).
func Run(t *testing.T, kinds []device.Kind, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			w := newWorld(t, kinds, []*corev1.Node{tc.Node}, tc.NodeProblems, tc.Counted...)
			if tc.Quota != nil {
				rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
				for r, v := range tc.Quota {
					rq.Spec.Hard[corev1.ResourceName(r)] = resource.MustParse(v)
				}
				if probs := w.C.SetQuota(rq); len(probs) != 0 {
					t.Fatalf("quota: %v", probs)
				}
			}
			v := w.Evaluate(tc.Pod)
			got := Devices(v)
			if !equal(got, tc.Want) {
				t.Fatalf("placed %v, want %v (fits=%v: %s; reason %q; problems %v)", got, tc.Want, v.Fits, v.Summary, Reason(v, tc.Node.Name), v.Problems)
			}
			if tc.Detail != "" {
				checkDetail(t, v, tc.Node.Name, tc.Detail)
			}
			if tc.Want == nil {
				checkRefusal(t, v, tc)
				return
			}
			annos := v.Placement.Annotations(TestTime)
			for k, want := range tc.Annotations {
				if annos[k] != want {
					t.Errorf("annotation %s = %q, want %q", k, annos[k], want)
				}
			}
			for _, k := range tc.Absent {
				if _, ok := annos[k]; ok {
					t.Errorf("annotation %s is written", k)
				}
			}
		})
	}
}

// checkRefusal checks the reason text, the code and the explanation of a pod that does not fit.
func checkRefusal(t *testing.T, v *engine.Verdict, tc Case) {
	t.Helper()
	if tc.Reason != "" && Reason(v, tc.Node.Name) != tc.Reason {
		t.Errorf("reason %q, want %q", Reason(v, tc.Node.Name), tc.Reason)
	}
	if tc.Code != "" && (len(v.Reasons) != 1 || v.Reasons[0].Code != tc.Code) {
		t.Errorf("reasons %v, want %s: %s", v.Reasons, tc.Code, v.Summary)
	}
	why := strings.Join(v.Explanation, "\n")
	if tc.Explains != "" && !strings.Contains(why, tc.Explains) {
		t.Errorf("explanation lacks %q:\n%s", tc.Explains, why)
	}
	if !asksNVIDIA(tc.Pod) && (strings.Contains(why, "MIG") || strings.Contains(why, "numa-bind")) {
		t.Errorf("explanation of a pod asking for no NVIDIA GPU speaks of NVIDIA's MIG or numa-bind:\n%s", why)
	}
}

// checkDetail wants some device of the node to report detail in one of its gate results.
func checkDetail(t *testing.T, v *engine.Verdict, node, detail string) {
	t.Helper()
	var seen []string
	if s := v.NodeStatus(node); s != nil {
		for _, g := range s.GPUs {
			if strings.Contains(g.Result.Detail, detail) {
				return
			}
			seen = append(seen, g.UUID+": "+g.Result.Detail)
		}
	}
	t.Errorf("no device of node %s says %q: %q", node, detail, seen)
}

func asksNVIDIA(p *corev1.Pod) bool {
	for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		for r := range c.Resources.Limits {
			if strings.HasPrefix(string(r), "nvidia.com/") {
				return true
			}
		}
	}
	return false
}

func equal(a, b [][]string) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// Request reads p's one container as the engine does on a cluster of kinds: "count MiB/percent cores device
// template" (MiB after the memory factor, percent when no MiB is asked), and the problems' messages joined by
// "; ".
func Request(t testing.TB, kinds []device.Kind, p *corev1.Pod) (got, problems string) {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Vendors = kinds
	req, probs := engine.ParseRequest(p, cfg)
	var msgs []string
	for _, pr := range probs {
		msgs = append(msgs, pr.Message)
	}
	if len(req.Containers) != 1 {
		t.Fatalf("containers %+v, want one (problems %q)", req.Containers, msgs)
	}
	r := req.Containers[0]
	return fmt.Sprintf("%d %d/%d %d %s %s", r.Count, r.MemoryMiB, r.MemoryPercent, r.Cores, r.Device, r.Template), strings.Join(msgs, "; ")
}

// PlacedWithScores checks that the pod fits on node want and that each node named in scores got that node
// score (the families' node-score tables).
func PlacedWithScores(t testing.TB, v *engine.Verdict, want string, scores map[string]float64) {
	t.Helper()
	if !v.Fits || v.Placement.Node != want {
		t.Fatalf("want %s: fits %v: %s", want, v.Fits, v.Summary)
	}
	for _, ns := range v.Nodes() {
		if w, ok := scores[ns.Node]; ok && ns.Score != w {
			t.Errorf("node %s scores %v, want %v", ns.Node, ns.Score, w)
		}
	}
}
