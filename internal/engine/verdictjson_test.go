package engine

import (
	"encoding/json"
	"testing"
)

// TestVerdictJSONRoundTrip: a verdict written and read back is the same verdict, its node statuses included.
func TestVerdictJSONRoundTrip(t *testing.T) {
	c := benchCluster(t, 3, 2)
	for _, pod := range []struct {
		name string
		v    *Verdict
	}{{"pending", c.Evaluate(pendingPod(), EvalOptions{DetailAll: true})}, {"fits", c.Evaluate(fittingPod(), EvalOptions{})}} {
		a, err := json.Marshal(pod.v)
		if err != nil {
			t.Fatal(err)
		}
		var back Verdict
		if err := json.Unmarshal(a, &back); err != nil {
			t.Fatal(err)
		}
		if len(back.Nodes()) != 3 || back.Nodes()[0].Node != pod.v.Nodes()[0].Node {
			t.Fatalf("%s: read back %d statuses, want 3", pod.name, len(back.Nodes()))
		}
		b, _ := json.Marshal(&back)
		if string(a) != string(b) {
			t.Errorf("%s: written again\n%s\nwant\n%s", pod.name, b, a)
		}
		// By value, as a map's values are written.
		byValue, _ := json.Marshal(map[string]Verdict{"v": *pod.v})
		if want := `{"v":` + string(a) + `}`; string(byValue) != want {
			t.Errorf("%s: written by value\n%s\nwant\n%s", pod.name, byValue, want)
		}
	}
}
