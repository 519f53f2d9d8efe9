package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-hami/kubectl-hami/examples"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agentapi"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/usage"
)

// TestTopLiveUsageTable: --once prints the agents' numbers beside HAMi's allocation, and the agents that did not
// answer with their reason.
func TestTopLiveUsageTable(t *testing.T) {
	s, err := snapshot.Parse(examples.DemoCluster, "demo")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := cluster(s, &readFlags{deviceConfigMap: snapshot.DefaultDeviceConfigMap}, &bytes.Buffer{})
	u := 0.57
	live := &usage.Result{Agents: []usage.Agent{
		{Node: "gpu-a100-01", Pod: "kube-system/agent-1", Usage: &agentapi.UsageReport{Node: "gpu-a100-01", GPUs: []agentapi.GPUUsage{
			{Index: 0, UUID: "GPU-gpu-a100-01-0", MemoryUsedBytes: 40 << 30, MemoryTotalBytes: 80 << 30, Utilization: &u},
			{Index: 1, UUID: "GPU-gpu-a100-01-1", MemoryTotalBytes: 80 << 30, Error: "nvml: GPU is lost"},
		}}},
		{Node: "gpu-a100-02", Pod: "kube-system/agent-2", Error: "error trying to reach service: connection refused"},
	}}
	var b bytes.Buffer
	printLiveUsage(&b, c, live, false)
	got := b.String()
	for _, want := range []string{
		"NODE         GPU  UUID               MEM USED (MiB)  MEM TOTAL (MiB)  UTIL  ALLOCATED (MiB)",
		"gpu-a100-01  0    GPU-gpu-a100-01-0  40960           81920            57%   70000",
		"gpu-a100-01  1    GPU-gpu-a100-01-1  n/a             n/a              n/a   70000 (nvml: GPU is lost)",
		"gpu-a100-02  -    -                  n/a             n/a              n/a   agent kube-system/agent-2: error trying to reach service: connection refused",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("missing line %q in\n%s", want, got)
		}
	}
}

func TestTopAgentSelectorFlag(t *testing.T) {
	if _, _, err := run(t, "top", "--demo", "--agent-selector", "a in (b"); err == nil || !strings.Contains(err.Error(), "--agent-selector") {
		t.Errorf("a bad selector: %v", err)
	}
	// The demo never reads agents: its output is the golden's.
	for _, args := range [][]string{{"--agent-selector", ""}, {"--agent-namespace", "gpu-system"}} {
		if _, _, err := run(t, append([]string{"top", "--demo", "--once"}, args...)...); err != nil {
			t.Errorf("top --demo %v: %v", args, err)
		}
	}
}
