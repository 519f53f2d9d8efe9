package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// kubeGatesSnapshot writes issue 25's repro (testbuild.KubeGatesDemo) to a file and returns its path.
func kubeGatesSnapshot(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kube-gates.yaml")
	if err := os.WriteFile(path, tb.KubeGatesDemo(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKubeGatesRepro is issue 25's repro: gpu-t4-02 cordoned, gpu-t4-01 tainted dedicated=vision:NoSchedule,
// a pod selecting gpu-t4-01 by hostname. kube-scheduler's own checks are gates of the verdict: no node is
// available, the taint is the pod's row, what-if's copies leave the cordoned and tainted nodes out, and
// --exit-code fails.
func TestKubeGatesRepro(t *testing.T) {
	snap := kubeGatesSnapshot(t)
	out, _, err := run(t, "why-pending", "vision-1", "-n", "default", "--snapshot", snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"0/11 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 9 node(s) didn't match Pod's node affinity/selector.",
		"TaintToleration     1       gpu-t4-01: the pod does not tolerate taint dedicated=vision:NoSchedule",
		"tolerate taint dedicated=vision:NoSchedule (node gpu-t4-01) (Pod default/vision-1 spec.tolerations: (none) -> +dedicated=vision:NoSchedule): then it fits on gpu-t4-01",
		"uncordon node gpu-t4-02 (kubectl uncordon gpu-t4-02) (Node gpu-t4-02 spec.unschedulable: true -> false) is not enough: then TaintToleration on gpu-t4-01", // the main reason after the change: the node selector rules out every other node
	} {
		if !strings.Contains(out, want) {
			t.Errorf("why-pending: missing %q in\n%s", want, out)
		}
	}
	for _, bad := range []string{"nodes are available; best", "Placement on"} {
		if strings.Contains(out, bad) {
			t.Errorf("why-pending says %q for a pod no node takes:\n%s", bad, out)
		}
	}
	wide, _, err := run(t, "why-pending", "vision-1", "-n", "default", "--snapshot", snap, "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(wide, "\n") {
		if strings.Contains(l, "nodes are available:") {
			continue // the summary, in kube-scheduler's words
		}
		if strings.Contains(l, " yes ") || strings.Contains(l, "were unschedulable") && !strings.Contains(l, " no ") {
			t.Errorf("-o wide: a node row fits: %q", l)
		}
	}

	args := []string{"what-if", "--gpus", "1", "--gpumem", "1000", "--annotation", "nvidia.com/use-gputype=T4", "--count", "20", "--snapshot", snap}
	wi, _, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	copies := ""
	for _, l := range strings.Split(wi, "\n") {
		if strings.HasPrefix(l, "Copies:") {
			copies = l
		}
	}
	if copies == "" || strings.Contains(copies, "gpu-t4-01") || strings.Contains(copies, "gpu-t4-02") {
		t.Errorf("what-if copies land on the tainted or cordoned node: %q\n%s", copies, wi)
	}
	// Node state as kubectl shows it, in top's text and JSON.
	top, _, err := run(t, "top", "--snapshot", snap, "--once")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"taint dedicated=vision:NoSchedule", "SchedulingDisabled", "unregistered (HAMi v2.10 cannot read it)"} {
		if !strings.Contains(top, want) {
			t.Errorf("top lacks %q:\n%s", want, top)
		}
	}
	js, _, err := run(t, "top", "--snapshot", snap, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"unschedulable": true`, `"taints": [`, `"dedicated=vision:NoSchedule"`, `"unreadableBy": "v2.10"`} {
		if !strings.Contains(js, want) {
			t.Errorf("top -o json lacks %s", want)
		}
	}

	// A pod being deleted reads Terminating, with the GPUs it still holds.
	term, _, err := run(t, "why-pending", "segmenter-0", "-n", "team-vision", "--snapshot", snap)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(term, "it is Terminating on node gpu-t4-01") || !strings.Contains(term, "It still holds its GPUs until it is gone:") || !strings.Contains(term, "GPU-gpu-t4-01-") {
		t.Errorf("why-pending of a Terminating pod:\n%s", term)
	}

	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: v1
kind: Pod
metadata: {name: vision-2, namespace: default}
spec:
  nodeSelector: {kubernetes.io/hostname: gpu-t4-01}
  containers:
  - name: main
    image: vision:1
    resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 1000}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	sel, _, err := run(t, "what-if", "-f", manifest, "--snapshot", snap, "--exit-code")
	if !errors.Is(err, errWouldNotFit) {
		t.Errorf("what-if --exit-code for a pod selecting the tainted node: err %v, want errWouldNotFit\n%s", err, sel)
	}
	if !strings.Contains(sel, "0/11 nodes are available") || !strings.Contains(sel, "TaintToleration") {
		t.Errorf("what-if for a pod selecting the tainted node:\n%s", sel)
	}
}

// TestWhyStillPending: a pod that fits but stays Pending is told why: on the kube-gates demo with a kube-system
// pod that is no scheduler, neither hami-scheduler nor default-scheduler is seen, and no FailedScheduling event
// exists; a non-GPU pod is not told that default-scheduler places it.
func TestWhyStillPending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "still-pending.yaml")
	extra := `
---
apiVersion: v1
kind: Pod
metadata: {name: coredns-1, namespace: kube-system, creationTimestamp: "2026-11-20T08:00:00Z"}
spec: {nodeName: cpu-01, containers: [{name: coredns, image: coredns}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default, creationTimestamp: "2026-11-20T09:00:00Z"}
spec:
  schedulerName: default-scheduler
  containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m}}}]
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: infer-1, namespace: default, creationTimestamp: "2026-11-20T09:59:50Z"}
spec:
  schedulerName: hami-scheduler
  containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 1000}}}]
status: {phase: Pending}
`
	if err := os.WriteFile(path, append(tb.KubeGatesDemo(), []byte(extra)...), 0o644); err != nil {
		t.Fatal(err)
	}
	web, _, err := run(t, "why-pending", "web-1", "-n", "default", "--snapshot", path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(web, "places the pod") || !strings.Contains(web, "no scheduler named default-scheduler is seen (no held leader Lease kube-scheduler") {
		t.Errorf("non-GPU pod on a cluster with no scheduler seen:\n%s", web)
	}
	gpu, _, err := run(t, "why-pending", "infer-1", "-n", "default", "--snapshot", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Placement on", "Why it may still be Pending:", "no scheduler named hami-scheduler is seen", "the pod is 10s old"} {
		if !strings.Contains(gpu, want) {
			t.Errorf("a fitting GPU pod: missing %q in\n%s", want, gpu)
		}
	}
}
