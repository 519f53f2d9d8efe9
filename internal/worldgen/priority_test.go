package worldgen

import (
	"bytes"
	"testing"
)

// The same seed gives the same priorities, classes and budgets; every pod gets a priority or a class.
func TestWithPrioritiesIsDeterministic(t *testing.T) {
	write := func() []byte {
		w := World(7, Options{MaxPods: 30})
		WithPriorities(w, 7)
		for _, p := range w.Pods.Slice() {
			if p.Spec.NodeName != "" && p.Status.StartTime == nil {
				t.Fatalf("running pod %s has no start time", p.Name)
			}
		}
		if len(w.PriorityClasses) != len(Classes) {
			t.Fatalf("%d PriorityClasses, want %d", len(w.PriorityClasses), len(Classes))
		}
		var buf bytes.Buffer
		if err := w.WriteList(&buf, "json"); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	if a, b := write(), write(); !bytes.Equal(a, b) {
		t.Fatal("two worlds of seed 7 with priorities differ")
	}
}
