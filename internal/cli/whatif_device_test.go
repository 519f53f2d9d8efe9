package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWhatIfDevice: --device asks for another family's device, in its words and with its resources; an
// unknown device or a resource the family lacks is refused with the names that exist.
func TestWhatIfDevice(t *testing.T) {
	out, _, err := run(t, "what-if", "--demo", "-n", "speech", "--device", "dcu", "--gpus", "1", "--gpumem", "8000", "--gpucores", "30")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"container main: 1 DCU(s) of type DCU, each 8000 MiB, 30% cores", "Placement on gpu-mx-dcu:",
		"limits.hygon.com/dcumem   64000 MiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("what-if --device dcu lacks %q:\n%s", want, out)
		}
	}
	out, _, err = run(t, "what-if", "--demo", "-n", "npu-lab", "--device", "ascend910b3", "--gpus", "1", "--gpumem", "20000")
	if err != nil {
		t.Fatal(err)
	}
	// 20000 MiB is rounded up to the 32 GiB vNPU template, as HAMi's webhook does.
	if !strings.Contains(out, "1 NPU(s) of type Ascend910B3 (vNPU template vir10_3c_32g), each 32768 MiB") || !strings.Contains(out, "gpu-mx-npu") {
		t.Errorf("what-if --device ascend910b3:\n%s", out)
	}
	for _, tc := range []struct{ args, want string }{
		{"--device nosuch", `--device: unknown device "nosuch"; known: nvidia, dcu, ascend910a`},
		{"--device ascend", `--device: device "ascend" has several types; name one: ascend910a`},
		{"--device metax --gpumem 1000", "--gpumem: Metax-GPU devices have no such resource"},
	} {
		_, _, err := run(t, append([]string{"what-if", "--demo"}, strings.Fields(tc.args)...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("what-if %s: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestWhatIfDeviceClusterNames: --device asks with the cluster's resource names from HAMi's device ConfigMap
// (query.WhatIfPod built with the cluster's kinds, as the UI's form does), not the chart's defaults.
func TestWhatIfDeviceClusterNames(t *testing.T) {
	snap := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {namespace: kube-system, name: hami-scheduler-device}
  data:
    device-config.yaml: |
      nvidia:
        resourceCountName: nvidia.com/gpu
      hygon:
        resourceCountName: example.com/dcu
        resourceMemoryName: example.com/dcu-mem
        resourceCoreName: example.com/dcu-cores
`
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(path, []byte(snap), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "what-if", "--snapshot", path, "-n", "ml", "--device", "dcu", "--gpus", "1", "--gpumem", "8000", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	// The engine reads the cluster's names only: a pod asking with the defaults would ask for no DCU at all.
	if want := "container main asks for 1 DCU(s) (DCU), each with 8000 MiB"; !strings.Contains(out, want) {
		t.Errorf("what-if --device dcu on a cluster that renames the DCU's resources lacks %q:\n%s", want, out)
	}
}
