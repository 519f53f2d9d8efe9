package engine

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestAnswersKeepTheirNodesAcrossChanges: a verdict keeps the cluster's node list instead of a copy
// (nodelist.go) and builds its statuses when they are read; a node added, replaced or removed after the
// evaluation must not change what it reads, however many answers share the list.
func TestAnswersKeepTheirNodesAcrossChanges(t *testing.T) {
	for _, pod := range []*corev1.Pod{fittingPod(), pendingPod()} {
		c := benchCluster(t, 24, 3)
		read, _ := json.Marshal(c.Evaluate(pod, EvalOptions{})) // read at once
		kept := []*Verdict{c.Evaluate(pod, EvalOptions{}), c.Evaluate(pod, EvalOptions{})}
		sum := c.Summarize(pod, EvalOptions{})
		var sumNodes []string
		for i := 0; i < sum.Len(); i++ {
			sumNodes = append(sumNodes, sum.nodes[i].Name)
		}
		changes := []func(){
			func() { c.RemoveNode("node-00003") },
			func() { c.SetNode(mkNode("node-00000a", gpus("node-00000a", 2, 16384))) }, // inserted near the front
			func() { c.SetNode(mkNode("node-00010", gpus("node-00010", 1, 1024))) },    // replaced
			func() { c.SetNode(mkNode("node-99999", gpus("node-99999", 8, 81920))) },   // appended
		}
		for k, change := range changes {
			change()
			if k == 1 {
				kept = append(kept, c.Evaluate(pod, EvalOptions{})) // shares the list of after this change
			}
		}
		for i, v := range kept[:2] {
			if got, _ := json.Marshal(v); string(got) != string(read) {
				t.Fatalf("pod %s: verdict %d read after the cluster's changes differs from the one read at once:\n  %s\n  %s", pod.Name, i, got, read)
			}
		}
		if v := kept[2]; v.NodeCount() != 24 || v.Nodes()[1].Node != "node-00000a" {
			t.Fatalf("pod %s: the verdict evaluated between the changes has %d nodes, the second %q", pod.Name, v.NodeCount(), v.Nodes()[1].Node)
		}
		for i := range sumNodes {
			if sum.nodes[i].Name != sumNodes[i] {
				t.Fatalf("pod %s: the summary's row %d is now node %s, was %s", pod.Name, i, sum.nodes[i].Name, sumNodes[i])
			}
		}
		if got := fmt.Sprint(len(c.nodeList)); got != "25" {
			t.Fatalf("the cluster has %s nodes after the changes, want 25", got)
		}
	}
}

// TestSharedNodesConcurrent: evaluations running together (the extender's, under its reader lock) all mark the
// list shared; a change after them copies it, and every verdict still reads the nodes it walked. Run under -race
// by make test.
func TestSharedNodesConcurrent(t *testing.T) {
	c := benchCluster(t, 40, 2)
	want, _ := json.Marshal(c.Evaluate(pendingPod(), EvalOptions{}))
	verdicts := make([]*Verdict, 8)
	var wg sync.WaitGroup
	for i := range verdicts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			verdicts[i] = c.Evaluate(pendingPod(), EvalOptions{})
		}()
	}
	wg.Wait()
	c.RemoveNode("node-00000")
	c.SetNode(mkNode("node-00001", gpus("node-00001", 1, 1024)))
	for i, v := range verdicts {
		if got, _ := json.Marshal(v); string(got) != string(want) {
			t.Fatalf("verdict %d, read after the changes, differs from the one read before them", i)
		}
	}
}
