package engine

import (
	"strings"
	"testing"
)

// TestFamilyRowsSayTheirOwnFailure: a family row that shares a code with an earlier row and has its own
// sentence (Enflame's used GCU shares NVIDIA's ExclusiveDeviceAllocateConflict; Kunlun's and MetaX's custom
// filters CardNotFoundCustomFilterRule) is explained in its own words when the code's example comes from it,
// and the code's first row keeps its sentence for its own examples.
func TestFamilyRowsSayTheirOwnFailure(t *testing.T) {
	checked := 0
	for i := range Gates {
		g := &Gates[i]
		first := GateOf(g.Code)
		if first == g || g.say == nil {
			continue
		}
		k := codeIndex(g.Code)
		var a aggregate
		a.gpus[k] = 2
		a.best[k] = example{node: "n1", gpu: 0, set: true, gate: g.Name, detail: "the row's detail"}
		s := saying{gpus: 2, e: &a.best[k], req: &PodRequest{}}
		got := a.sentence(g.Code, 0, &PodRequest{}, QuotaStatus{})
		if want := g.say(&a, s); !strings.HasSuffix(got, ": "+want) {
			t.Errorf("row %s (%s, %s): the explanation says %q, want its own sentence %q", g.Number, g.Name, g.Code, got, want)
		}
		a.best[k].gate = first.Name
		if got, want := a.sentence(g.Code, 0, &PodRequest{}, QuotaStatus{}), first.say(&a, s); first.say != nil && !strings.HasSuffix(got, ": "+want) {
			t.Errorf("row %s's code %s from its first row %s: the explanation says %q, want %q", g.Number, g.Code, first.Number, got, want)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no family row shares a code with its own sentence: the test checks nothing")
	}
}
