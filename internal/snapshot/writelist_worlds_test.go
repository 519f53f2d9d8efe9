package snapshot_test

import (
	"bytes"
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestWriteListIsTheWholeListOnWorlds: over generated worlds (nodes, pods with every field the readers skip,
// quotas, priority classes, Volcano queues and PodGroups), the list written an item at a time is byte for byte
// the whole list marshalled and indented or converted, in JSON and YAML.
func TestWriteListIsTheWholeListOnWorlds(t *testing.T) {
	first, n := worldgen.Seeds(20)
	compared := 0
	for seed := first; seed < first+uint64(n); seed++ {
		w := worldgen.World(seed, worldgen.Options{MaxNodes: 6, MaxPods: 30, Kube: seed%2 == 0})
		worldgen.WithPriorities(w, seed)
		for i, p := range w.Pods.Slice() {
			addUnreadFields(p, seed+uint64(i))
		}
		for _, format := range []string{"json", "yaml"} {
			var got, want bytes.Buffer
			if err := w.WriteList(&got, format); err != nil {
				t.Fatal(err)
			}
			if err := snapshot.WholeList(w, &want, format); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("seed %d, %s: WriteList wrote %d bytes, the whole list is %d, and they differ", seed, format, got.Len(), want.Len())
			}
			compared++
		}
	}
	if compared == 0 {
		t.Fatal("no world compared")
	}
}
