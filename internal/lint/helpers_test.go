package lint

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

const (
	qAnn = "scheduling.volcano.sh/queue-name"
	cAnn = "volcano.sh/card.name"
	gAnn = "scheduling.k8s.io/group-name"
	h200 = "NVIDIA-H200"
	mig  = "NVIDIA-H200/mig-1g.18gb-mixed"
)

func resources(m map[string]string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range m {
		out[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return out
}

// node builds a node; physical > 0 adds HAMi's register annotation with that many GPUs of 10 slots each.
func node(name string, labels, alloc map[string]string, physical int) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	n.Status.Allocatable = resources(alloc)
	n.Status.Capacity = resources(alloc)
	if physical > 0 {
		var gpus []map[string]any
		for i := 0; i < physical; i++ {
			gpus = append(gpus, map[string]any{"id": fmt.Sprintf("GPU-%s-%d", name, i), "index": i, "count": 10, "devmem": 143771,
				"devcore": 100, "type": "NVIDIA H200", "mode": "hami-core", "health": true})
		}
		js, _ := json.Marshal(gpus)
		n.Annotations = map[string]string{"hami.io/node-nvidia-register": string(js)}
	}
	return n
}

// h200Node is a HAMi node with 8 H200 GPUs (80 slots) and three 1g.18gb MIG slices.
func h200Node() *corev1.Node {
	return node("h200-01", map[string]string{"nvidia.com/gpu.product": h200, "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "143771"},
		map[string]string{"nvidia.com/gpu": "80", "nvidia.com/mig-1g.18gb": "3"}, 8)
}

func pod(ns, name string, ann, limits map[string]string, nodeName string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann}}
	p.Spec.Containers = []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Limits: resources(limits)}}}
	p.Spec.NodeName = nodeName
	p.Status.Phase = corev1.PodPending
	if nodeName != "" {
		p.Status.Phase = corev1.PodRunning
	}
	return p
}

var gpu1 = map[string]string{"nvidia.com/gpu": "1"}

// queue builds a Volcano Queue; quota "-" leaves the card quota annotation out.
func queue(name, quota string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
		"metadata": map[string]any{"name": name}, "status": map[string]any{"state": "Open"}}}
	if quota != "-" {
		u.SetAnnotations(map[string]string{"volcano.sh/card.quota": quota})
	}
	return u
}

// podGroup builds a PodGroup; request "-" leaves the card request annotation out.
func podGroup(ns, name, q, request string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
		"metadata": map[string]any{"namespace": ns, "name": name}, "spec": map[string]any{"queue": q, "minMember": int64(1)}}}
	if request != "-" {
		u.SetAnnotations(map[string]string{"volcano.sh/card.request": request})
	}
	return u
}

func rq(ns, name string, hard map[string]string) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: resources(hard)}}
}

// snap gathers objects into a snapshot; Volcano is on when a queue is given.
func snap(objs ...any) *snapshot.Snapshot {
	s := &snapshot.Snapshot{Source: "test"}
	for _, o := range objs {
		switch x := o.(type) {
		case *corev1.Node:
			s.Nodes = append(s.Nodes, x)
		case *corev1.Pod:
			s.Pods.Add(x)
		case *corev1.ResourceQuota:
			s.Quotas = append(s.Quotas, x)
		case *unstructured.Unstructured:
			if x.GetKind() == "Queue" {
				s.Queues = append(s.Queues, x)
			} else {
				s.PodGroups = append(s.PodGroups, x)
			}
		default:
			panic(fmt.Sprintf("snap: %T", o))
		}
	}
	s.Volcano = len(s.Queues) > 0
	return s
}

// want is an expected finding: exact severity, object ("Kind ns/name") and field, substrings of message and fix.
type want struct {
	sev        Severity
	obj, field string
	msg, fix   string
}

type lintCase struct {
	name string
	s    *snapshot.Snapshot
	cfg  *engine.Config
	want []want
}

// runCheck runs one named check on the snapshot, sorted as Run sorts.
func runCheck(t *testing.T, check string, s *snapshot.Snapshot, cfg engine.Config) []Finding {
	t.Helper()
	c, _ := s.Cluster(cfg)
	in := newInput(s, c, cfg)
	for _, ch := range Checks {
		if ch.Name == check {
			fs := ch.run(in)
			for i := range fs {
				fs[i].Check = ch.Name
			}
			Sort(fs)
			return fs
		}
	}
	t.Fatalf("no check %q", check)
	return nil
}

func testCheck(t *testing.T, check string, cases []lintCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := engine.DefaultConfig()
			if tc.cfg != nil {
				cfg = *tc.cfg
			}
			got := runCheck(t, check, tc.s, cfg)
			if len(got) != len(tc.want) {
				t.Fatalf("%s: got %d findings, want %d:\n%s", check, len(got), len(tc.want), dump(got))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Severity != w.sev || g.Object.String() != w.obj || g.Field != w.field ||
					!strings.Contains(g.Message, w.msg) || !strings.Contains(g.Fix, w.fix) {
					t.Errorf("finding %d:\n got %s\nwant %s %s %s: message with %q, fix with %q", i, dump(got[i:i+1]), w.sev, w.obj, w.field, w.msg, w.fix)
				}
				if g.Message == "" || g.Fix == "" {
					t.Errorf("finding %d has no message or no fix: %s", i, dump(got[i:i+1]))
				}
			}
		})
	}
}

func dump(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %s %s [%s]\n    %s\n    fix: %s\n", f.Severity, f.Object, f.Field, f.Check, f.Message, f.Fix)
	}
	return b.String()
}
