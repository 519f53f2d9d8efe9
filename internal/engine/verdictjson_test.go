package engine

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestVerdictWireHasEveryField holds verdictWire to Verdict: every exported field, in order, with its type and
// tag, and the fitting nodes as "feasible" after the placement and the node statuses as "nodes" after the
// reasons, where the fields stood.
func TestVerdictWireHasEveryField(t *testing.T) {
	var want []reflect.StructField
	vt := reflect.TypeOf(Verdict{})
	for i := 0; i < vt.NumField(); i++ {
		f := vt.Field(i)
		if !f.IsExported() {
			continue
		}
		want = append(want, f)
		if f.Name == "Placement" {
			feasible, _ := reflect.TypeOf(verdictWire{}).FieldByName("Feasible")
			want = append(want, feasible)
		}
		if f.Name == "Reasons" {
			nodes, _ := reflect.TypeOf(verdictWire{}).FieldByName("Nodes")
			want = append(want, nodes)
		}
	}
	wt := reflect.TypeOf(verdictWire{})
	if wt.NumField() != len(want) {
		t.Fatalf("verdictWire has %d fields, Verdict %d exported plus Feasible and Nodes", wt.NumField(), len(want))
	}
	for i, f := range want {
		g := wt.Field(i)
		if g.Name != f.Name || g.Type != f.Type || g.Tag.Get("json") != f.Tag.Get("json") {
			t.Errorf("field %d: verdictWire has %s %v %q, Verdict %s %v %q", i, g.Name, g.Type, g.Tag.Get("json"), f.Name, f.Type, f.Tag.Get("json"))
		}
	}
	if g, _ := wt.FieldByName("Nodes"); g.Type != reflect.TypeOf([]NodeStatus(nil)) || g.Tag.Get("json") != "nodes" {
		t.Errorf("verdictWire.Nodes is %v %q", g.Type, g.Tag.Get("json"))
	}
	if g, _ := wt.FieldByName("Feasible"); g.Type != reflect.TypeOf([]string(nil)) || g.Tag.Get("json") != "feasible,omitempty" {
		t.Errorf("verdictWire.Feasible is %v %q", g.Type, g.Tag.Get("json"))
	}
}

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
