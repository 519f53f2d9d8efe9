package cli

import (
	"strings"
	"testing"
)

// TestForgedPodChangesNothing is issue 19's forged pod through the read commands: what-if and why-pending keep
// the full GPU full, and why-pending and lint name the pod.
func TestForgedPodChangesNothing(t *testing.T) {
	const snap = "testdata/forged-pod.yaml"
	out, _, err := run(t, "what-if", "--snapshot", snap, "--gpus", "1", "--gpumem", "30000")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "0/1 nodes are available") || !strings.Contains(out, "Copies: 0 fit now") {
		t.Errorf("what-if on the full GPU:\n%s", out)
	}
	out, _, err = run(t, "why-pending", "probe", "-n", "team", "--snapshot", snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0/1 nodes are available", "GPUs held by pods not bound to their node",
		`attacker/forged: it holds GPUs on node full-node (hami.io/vgpu-node) but is bound to no node (hami.io/bind-phase "", scheduler "no-such-scheduler")`} {
		if !strings.Contains(out, want) {
			t.Errorf("why-pending lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = run(t, "lint", "--snapshot", snap)
	for _, want := range []string{"Pod attacker/forged", "(gpus-held-unbound)", "larger than 1099511627776"} {
		if !strings.Contains(out, want) {
			t.Errorf("lint lacks %q:\n%s", want, out)
		}
	}
}
