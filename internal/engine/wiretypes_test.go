package engine

import (
	"reflect"
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// wireExtra is a field a written struct has and its type does not: written after the type's field `after`.
type wireExtra struct {
	after, name string
	typ         reflect.Type
	tag         string
}

// TestWireTypesHaveEveryField holds each written struct (WireTypes) to its type: every exported field, in
// order, with its type and tag, and the fields only the written struct has where the type's fields stood (the
// verdict's fitting nodes after its placement and node statuses after its reasons; an allocation's MIG
// instances after its uses and other types' quota charges after its core quota).
func TestWireTypesHaveEveryField(t *testing.T) {
	extras := map[reflect.Type][]wireExtra{
		reflect.TypeOf(Verdict{}): {
			{"Placement", "Feasible", reflect.TypeOf([]string(nil)), "feasible,omitempty"},
			{"Reasons", "Nodes", reflect.TypeOf([]NodeStatus(nil)), "nodes"},
		},
		reflect.TypeOf(PodAllocation{}): {
			{"Uses", "Mig", reflect.TypeOf([]codec.MigAllocation(nil)), "mig,omitempty"},
			{"QuotaCores", "VendorQuota", reflect.TypeOf(map[string]int64(nil)), "vendorQuota,omitempty"},
		},
	}
	wires := WireTypes()
	if len(wires) != len(extras) {
		t.Fatalf("WireTypes has %d types, this test knows %d: add the new one's extra fields here", len(wires), len(extras))
	}
	for kept, wire := range wires {
		adds, ok := extras[kept]
		if !ok {
			t.Fatalf("%v writes %v: add its extra fields here", kept, wire)
		}
		var want []reflect.StructField
		for i := 0; i < kept.NumField(); i++ {
			f := kept.Field(i)
			if !f.IsExported() {
				continue
			}
			want = append(want, f)
			for _, x := range adds {
				if x.after == f.Name {
					w, found := wire.FieldByName(x.name)
					if !found || w.Type != x.typ || w.Tag.Get("json") != x.tag {
						t.Errorf("%v.%s is %v %q, want %v %q", wire, x.name, w.Type, w.Tag.Get("json"), x.typ, x.tag)
					}
					want = append(want, w)
				}
			}
		}
		if wire.NumField() != len(want) {
			t.Fatalf("%v has %d fields, %v %d exported plus %d written only", wire, wire.NumField(), kept, len(want)-len(adds), len(adds))
		}
		for i, f := range want {
			if g := wire.Field(i); g.Name != f.Name || g.Type != f.Type || g.Tag.Get("json") != f.Tag.Get("json") {
				t.Errorf("field %d: %v has %s %v %q, %v %s %v %q", i, wire, g.Name, g.Type, g.Tag.Get("json"), kept, f.Name, f.Type, f.Tag.Get("json"))
			}
		}
	}
}
