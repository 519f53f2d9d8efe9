// Package familytest runs a family's Kinds through the engine for the family's own table tests: a one-node
// cluster that schedules the family's types beside NVIDIA's, counted pods on it, and a pod evaluated there.
// Only tests import it (a family package itself never imports the engine).
package familytest

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

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

// Kind is the family's Kind of that name (HAMi's CommonWord).
func Kind(t testing.TB, f device.Family, name string) device.Kind {
	t.Helper()
	for _, k := range Kinds(t, f) {
		if k.Name == name {
			return k
		}
	}
	t.Fatalf("%s has no kind %s", f.Name(), name)
	return device.Kind{}
}

// Register is HAMi's JSON device list of a register annotation.
func Register(devs ...codec.DeviceInfo) string { return codec.FormatNodeRegister(devs) }

// Node is a node with these annotations and capacity (also its allocatable).
func Node(name string, annos map[string]string, capacity map[string]string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annos}}
	if len(capacity) > 0 {
		n.Status.Capacity, n.Status.Allocatable = corev1.ResourceList{}, corev1.ResourceList{}
		for r, v := range capacity {
			n.Status.Capacity[corev1.ResourceName(r)] = resource.MustParse(v)
			n.Status.Allocatable[corev1.ResourceName(r)] = resource.MustParse(v)
		}
	}
	return n
}

// Pod is a pod in namespace ns whose containers have these limits, one map per container.
func Pod(name string, annos map[string]string, containers ...map[string]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: annos}}
	for i, limits := range containers {
		c := corev1.Container{Name: "c" + string(rune('0'+i)), Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{}}}
		for r, v := range limits {
			c.Resources.Limits[corev1.ResourceName(r)] = resource.MustParse(v)
		}
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
	return p
}

// Counted makes p a pod bound to node with this device list annotation (key: the Kind's Allocated).
func Counted(p *corev1.Pod, node, key, devices string) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[key] = devices
	p.Annotations[codec.PodNodeAnnotation] = node
	p.Annotations[codec.PodBindPhaseAnnotation] = codec.BindPhaseSuccess
	p.Spec.NodeName = node
	return p
}

// World is a cluster scheduling NVIDIA and the given Kinds.
type World struct {
	t testing.TB
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
	w := &World{t: t, C: engine.NewCluster(cfg)}
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

// Evaluate is the engine's verdict on p.
func (w *World) Evaluate(p *corev1.Pod) *engine.Verdict {
	return w.C.Evaluate(p, engine.EvalOptions{Now: time.Unix(1_700_000_000, 0)})
}

// Devices lists the UUIDs a fitting verdict places, container by container, "" for a pod that does not fit.
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

// Case is one row of a family's table test: a one-node world ("n1") and a pod evaluated on it.
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
	// Reason is node n1's HAMi reason text when the pod does not fit ("" checks nothing).
	Reason string
	// Annotations are bind annotations the placement must write (key: value).
	Annotations map[string]string
}

// Run evaluates every case on a cluster of kinds.
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
			if tc.Want == nil && tc.Reason != "" && Reason(v, tc.Node.Name) != tc.Reason {
				t.Fatalf("reason %q, want %q", Reason(v, tc.Node.Name), tc.Reason)
			}
			if len(tc.Annotations) > 0 {
				annos := v.Placement.Annotations(time.Unix(1_700_000_000, 0))
				for k, want := range tc.Annotations {
					if annos[k] != want {
						t.Errorf("annotation %s = %q, want %q", k, annos[k], want)
					}
				}
			}
		})
	}
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
