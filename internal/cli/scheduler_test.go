package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

const cardWorld = "testdata/world-card-only.yaml"

// TestTopCardOnlyPodThatFits: issue 14's crash. A pending pod that asks only for a MIG slice and fits its
// queue's card quota has a fitting verdict without a placement; top (--once, wide and JSON) names the
// preferred node and the scheduler instead of dereferencing a placement.
func TestTopCardOnlyPodThatFits(t *testing.T) {
	for _, args := range [][]string{{"top", "--once"}, {"top", "--once", "-o", "wide"}} {
		out, errOut, err := run(t, append(args, "--snapshot", cardWorld)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut)
		}
		for _, want := range []string{
			"mig-notebook   0      1h    fits now, preferred a100-mig-01 (volcano's to place; HAMi chooses no GPU)",
			"train-small    2      1h    fits now, preferred h100-01 (volcano's to place; HAMi chooses no GPU)",
			"train-big      4      1h    QueueCardQuotaNotFit on 1/2 nodes: h100-01: queue research: NVIDIA-H100-80GB-HBM3 0 of 2 used, the pod needs 4",
			"misrouted      1      1h    SchedulerNotHAMi: asks for HAMi's nvidia.com/gpumem but is addressed to default-scheduler, not hami-scheduler",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: missing %q in\n%s", args, want, out)
			}
		}
	}
}

// TestVerdictsNameTheScheduler: seed 002's world (NVIDIA's device plugin, whole cards and MIG slices in
// allocatable, no HAMi registration): Volcano's pods get the standard checks and the card quota, never HAMi's
// NodeUnregistered; the misrouted pod is told so first, with the fix; --scheduler-name moves HAMi's profile.
func TestVerdictsNameTheScheduler(t *testing.T) {
	cases := []struct {
		pod       string
		args      []string
		want, not []string
	}{
		{"train-small", nil, []string{"1/2 nodes pass kube-scheduler's standard checks and the queue's card quota; preferred: h100-01; the pod is volcano's to place",
			"NodeResourcesFit   1       a100-mig-01: needs nvidia.com/gpu 2, 0 free of 0 allocatable"}, []string{"NodeUnregistered"}},
		{"train-big", nil, []string{"0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 QueueCardQuotaNotFit.",
			"raise its volcano.sh/card.quota to 4"}, []string{"NodeUnregistered"}},
		{"misrouted", nil, []string{"Not HAMi's pod: the pod asks for HAMi's nvidia.com/gpumem but spec.schedulerName is default-scheduler",
			"set spec.schedulerName: hami-scheduler"}, nil},
		// With default-scheduler named as HAMi's profile, HAMi's gates judge it: nothing is registered.
		{"misrouted", []string{"--scheduler-name", "default-scheduler"}, []string{"0/2 nodes are available: 2 NodeUnregistered."}, []string{"Not HAMi's pod"}},
	}
	for _, tc := range cases {
		out, errOut, err := run(t, append([]string{"why-pending", tc.pod, "-n", "team-a", "--snapshot", cardWorld}, tc.args...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.pod, err, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("why-pending %s %v: missing %q in\n%s", tc.pod, tc.args, w, out)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out, w) {
				t.Errorf("why-pending %s %v: unexpected %q in\n%s", tc.pod, tc.args, w, out)
			}
		}
	}
	out, _, err := run(t, "why-pending", "mig-notebook", "-n", "team-a", "--snapshot", cardWorld, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Verdict struct {
			Scheduler string   `json:"scheduler"`
			NotHAMi   bool     `json:"notHAMi"`
			Fits      bool     `json:"fits"`
			Feasible  []string `json:"feasible"`
			Placement any      `json:"placement"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if v := got.Verdict; v.Scheduler != "volcano" || !v.NotHAMi || !v.Fits || len(v.Feasible) != 1 || v.Feasible[0] != "a100-mig-01" || v.Placement != nil {
		t.Errorf("mig-notebook's verdict: %+v", v)
	}
}
