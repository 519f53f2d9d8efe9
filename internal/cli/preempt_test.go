package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// preemptWorld: one 80 GiB GPU held by a pod of priority 0 (experiment); a pod of class production (1000) waits
// for 60 GB; a PodDisruptionBudget protects another node's pod.
const preemptWorld = `apiVersion: v1
kind: List
items:
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: production}
  value: 1000
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-1
    annotations:
      hami.io/node-nvidia-register: '[{"id":"GPU-1","count":10,"devmem":81920,"devcore":100,"type":"NVIDIA-A100","health":true}]'
  status: {allocatable: {nvidia.com/gpu: "10", cpu: "32", memory: 128Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata:
    name: experiment
    namespace: lab
    annotations: {hami.io/vgpu-node: gpu-1, hami.io/vgpu-devices-allocated: "GPU-1,NVIDIA,40000,0:;"}
  spec:
    nodeName: gpu-1
    priority: 0
    containers:
    - name: c
      resources: {limits: {nvidia.com/gpu: "1", nvidia.com/gpumem: "40000"}}
  status: {phase: Running, startTime: "2026-11-20T09:00:00Z"}
- apiVersion: v1
  kind: Pod
  metadata: {name: infer, namespace: prod}
  spec:
    priorityClassName: production
    containers:
    - name: c
      resources: {limits: {nvidia.com/gpu: "1", nvidia.com/gpumem: "60000"}}
  status: {phase: Pending}
`

func TestWhyPendingAndWhatIfSayPreemption(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "world.yaml")
	if err := os.WriteFile(snap, []byte(preemptWorld), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "preempting pod lab/experiment (priority 0) on node gpu-1 would make it fit (priority 1000;"
	out, errOut, err := run(t, "why-pending", "infer", "-n", "prod", "--snapshot", snap)
	if err != nil || !strings.Contains(out, "Preemption:\n  - "+want) {
		t.Fatalf("why-pending: err %v %s\n%s\nwant %q", err, errOut, out, want)
	}
	js, _, err := run(t, "why-pending", "infer", "-n", "prod", "--snapshot", snap, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Preemption struct {
			Priority   int32
			Preemption struct {
				Node    string
				Victims []struct{ Namespace, Name string }
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil || got.Preemption.Priority != 1000 || got.Preemption.Preemption.Node != "gpu-1" ||
		len(got.Preemption.Preemption.Victims) != 1 || got.Preemption.Preemption.Victims[0].Name != "experiment" {
		t.Fatalf("why-pending -o json preemption %+v (%v):\n%s", got.Preemption, err, js)
	}
	manifest := filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: next, namespace: prod}\nspec:\n  priorityClassName: production\n"+
		"  containers:\n  - name: c\n    resources: {limits: {nvidia.com/gpu: \"1\", nvidia.com/gpumem: \"60000\"}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err = run(t, "what-if", "-f", manifest, "--snapshot", snap)
	if err != nil || !strings.Contains(out, "Preemption:\n  - "+want) {
		t.Fatalf("what-if: err %v %s\n%s\nwant %q", err, errOut, out, want)
	}
	// A pod of the same priority as the pods that hold the GPU preempts nothing: no section.
	out, _, err = run(t, "what-if", "--gpus", "1", "--gpumem", "60000", "--snapshot", snap)
	if err != nil || strings.Contains(out, "Preemption:") {
		t.Fatalf("what-if of a priority-0 pod: err %v\n%s", err, out)
	}
}
