package engine

import (
	"testing"

	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// TestNewPod: a pod not created yet goes through HAMi's webhook as the API server would send it there: a pod of
// the default scheduler that asks for HAMi's resources is judged for HAMi's profile, with a line saying so.
func TestNewPod(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SchedulerName = DefaultSchedulerName
	cases := []struct {
		name, want string
		pod        *tb.PodWrapper
		changes    int
	}{
		{"default-scheduler with a GPU request goes to HAMi", DefaultSchedulerName,
			tb.MakePod("ns", "p").SchedulerName("default-scheduler").Container("c").GPUs(1).GPUMem(1000), 1},
		{"no name: HAMi's, no line (the engine reads it so already)", DefaultSchedulerName,
			tb.MakePod("ns", "p").Container("c").GPUs(1).GPUMem(1000), 0},
		{"another scheduler keeps its name", "volcano",
			tb.MakePod("ns", "p").SchedulerName("volcano").Container("c").GPUs(1).GPUMem(1000), 0},
		{"no HAMi resource: untouched", "default-scheduler",
			tb.MakePod("ns", "p").SchedulerName("default-scheduler").Container("c"), 0},
		{"hami.io/webhook=ignore never reaches the webhook", "default-scheduler",
			tb.MakePod("ns", "p").SchedulerName("default-scheduler").Label(WebhookIgnoreLabel, "ignore").Container("c").GPUs(1).GPUMem(1000), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.pod.Obj()
			got, changes := NewPod(in, cfg)
			if got.Spec.SchedulerName != tc.want || len(changes) != tc.changes {
				t.Errorf("schedulerName %q, changes %q; want %q and %d change(s)", got.Spec.SchedulerName, changes, tc.want, tc.changes)
			}
			if in.Spec.SchedulerName != tc.pod.Obj().Spec.SchedulerName {
				t.Error("the pod given was changed")
			}
		})
	}
	// The extender's webhook (an empty Config.SchedulerName) names its profile itself.
	got, _ := Mutate(tb.MakePod("ns", "p").SchedulerName("default-scheduler").Container("c").GPUs(1).Obj(), DefaultConfig(), "hami-x")
	if got.Spec.SchedulerName != "hami-x" {
		t.Errorf("Mutate: schedulerName %q, want hami-x", got.Spec.SchedulerName)
	}
}
