package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The extender's evaluation (its filter's options: every node named, feasible nodes unranked, kube-scheduler's
// checks off) as a full verdict and as a Summary, on the 5,000-node / 100k-pod cluster (built once for the
// four) and on 500 nodes with 500 and with 10k pods (a summary allocates the same whatever the number of
// pods).

func BenchmarkExtender5000Nodes100kPods(b *testing.B) {
	c := benchCluster(b, 5000, 20)
	for _, pc := range []struct {
		name string
		pod  *corev1.Pod
		fits bool
	}{{"pending", pendingPod(), false}, {"fits", fittingPod(), true}} {
		b.Run("evaluate-"+pc.name, func(b *testing.B) { benchExtenderEval(b, c, pc.pod, pc.fits, false) })
		b.Run("summarize-"+pc.name, func(b *testing.B) { benchExtenderEval(b, c, pc.pod, pc.fits, true) })
	}
}

func BenchmarkExtenderSummarizePending500Nodes500Pods(b *testing.B) {
	benchExtenderEval(b, benchCluster(b, 500, 1), pendingPod(), false, true)
}

func BenchmarkExtenderSummarizePending500Nodes10kPods(b *testing.B) {
	benchExtenderEval(b, benchCluster(b, 500, 20), pendingPod(), false, true)
}

func benchExtenderEval(b *testing.B, c *Cluster, pod *corev1.Pod, wantFit, summary bool) {
	opts := EvalOptions{Nodes: c.NodeNames(), Unranked: true, Kube: KubeOff}
	if v := c.Evaluate(pod, opts); v.Fits != wantFit {
		b.Fatalf("fits=%v, want %v: %s", v.Fits, wantFit, v.Summary)
	}
	if summary {
		if s := c.Summarize(pod, opts); s.Verdict.Fits != wantFit || s.Len() != len(opts.Nodes) {
			b.Fatalf("summary: fits=%v over %d rows, want %v over %d", s.Verdict.Fits, s.Len(), wantFit, len(opts.Nodes))
		}
		benchLoop(b, func() { c.Summarize(pod, opts) })
		return
	}
	benchLoop(b, func() { c.Evaluate(pod, opts) })
}
