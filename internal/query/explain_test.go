package query

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
)

// TestExplain: the one answer holds every part why-pending shows, whoever asks: the verdict and its main
// reason, kube-scheduler's checks, unbound holders (sorted, whatever order the surface keeps its pods in), and
// "why it may still be Pending" only once the events are known; a bound pod gets where it runs instead.
func TestExplain(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	c := engine.NewCluster(engine.DefaultConfig())
	waiting := pod(map[string]string{"nvidia.com/gpu": "1"}, nil)
	holder := func(name string) *corev1.Pod {
		return pod(nil, func(p *corev1.Pod) {
			p.Name = name
			p.Annotations = map[string]string{codec.PodNodeAnnotation: "gpu-1"}
		})
	}
	z, a := holder("z-holder"), holder("a-holder")
	kubeCalls := 0
	in := ExplainInput{Pod: waiting, Pods: slices.Values([]*corev1.Pod{z, nil, waiting, a}), Now: now,
		KubeChecks: func(*corev1.Pod) []kubefit.NodeResult { kubeCalls++; return []kubefit.NodeResult{{Node: "n"}} }}

	got := Explain(c, in)
	if got.Verdict == nil || got.Verdict.Fits {
		t.Fatalf("verdict %+v: want one that does not fit (no nodes)", got.Verdict)
	}
	if want := engine.MainReason(got.Verdict); got.Main != want {
		t.Errorf("Main = %+v, want engine.MainReason's %+v", got.Main, want)
	}
	if kubeCalls != 1 || len(got.Kube) != 1 {
		t.Errorf("kube checks called %d times, %d results", kubeCalls, len(got.Kube))
	}
	if len(got.Unbound) != 2 || got.Unbound[0].Pod != "ns/a-holder" || got.Unbound[1].Pod != "ns/z-holder" ||
		!strings.Contains(got.Unbound[0].Message, "gpu-1") {
		t.Errorf("Unbound = %+v, want a-holder then z-holder on gpu-1", got.Unbound)
	}
	if got.Waiting != nil {
		t.Errorf("Waiting = %q for a pod that does not fit", got.Waiting)
	}

	// A bound pod: where it runs, no verdict; being deleted, Terminating as kubectl says.
	bound := waiting.DeepCopy()
	bound.Spec.NodeName = "gpu-1"
	bound.DeletionTimestamp = &metav1.Time{Time: now}
	in.Pod = bound
	got = Explain(c, in)
	if got.Verdict != nil || got.Node != "gpu-1" || got.Phase != "Terminating" {
		t.Errorf("bound pod: verdict %v, node %q, phase %q", got.Verdict, got.Node, got.Phase)
	}
}

// TestExplainWaitingNeedsEvents: a pod that fits gets "why it may still be Pending" only from events that were
// read (a snapshot's, or the live ones once fetched): before that, no FailedScheduling event says nothing.
func TestExplainWaitingNeedsEvents(t *testing.T) {
	c := engine.NewCluster(engine.DefaultConfig())
	p := pod(map[string]string{"cpu": "1"}, nil) // no GPU: fits wherever kube-scheduler's checks allow
	in := ExplainInput{Pod: p, Now: time.Unix(1_700_000_000, 0)}
	if got := Explain(c, in); !got.Verdict.Fits || got.Waiting != nil {
		t.Fatalf("events not read: fits %v, waiting %q; want a fit and no waiting lines", got.Verdict.Fits, got.Waiting)
	}
	in.EventsRead = true
	if got := Explain(c, in); len(got.Waiting) == 0 || !strings.Contains(got.Waiting[0], "no FailedScheduling event") {
		t.Errorf("events read, none failed: waiting %q", got.Waiting)
	}
}
