package device

import "testing"

func TestRowOrder(t *testing.T) {
	order := []string{"n1", "1", "4", "4a", "5", "9", "12", "13", "13a", "13b", "13c", "14", "14a"}
	for i := 0; i < len(order); i++ {
		for j := 0; j < len(order); j++ {
			if got, want := RowBefore(order[i], order[j]), i < j; got != want {
				t.Errorf("RowBefore(%s, %s) = %v, want %v", order[i], order[j], got, want)
			}
		}
	}
	if !EarlyRow(&Row{Number: "4a"}) || EarlyRow(&Row{Number: "13b"}) {
		t.Error("4a runs beside the selectors, 13b after the arithmetic")
	}
}

func TestValidateRows(t *testing.T) {
	base := Kind{Vendor: "v", Name: "N", Word: "W", Register: "r", ToAllocate: "t", Allocated: "a", Count: "c"}
	check := func(*Dev) Outcome { return Outcome{} }
	for _, tc := range []struct {
		name string
		rows []Row
		ok   bool
	}{
		{"building blocks", []Row{ReadyRow, NumaRow, QuotaRow, MIGRow}, true},
		{"a family row", []Row{{Number: "13d", Name: "x", Code: "C", Check: check}}, true},
		{"an unknown block", []Row{{Name: "nosuch"}}, false},
		{"a family row without a code", []Row{{Number: "13d", Name: "x", Check: check}}, false},
	} {
		k := base
		k.Rows = tc.rows
		if err := k.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
		if tc.ok && len(tc.rows) > 0 && !k.Has(tc.rows[0].Name) {
			t.Errorf("%s: Has(%s) is false", tc.name, tc.rows[0].Name)
		}
	}
}

func TestQosIndex(t *testing.T) {
	k := &Kind{QosAnnotation: "q", QosPolicies: []string{"a", "b", "c"}}
	for _, tc := range []struct {
		annos map[string]string
		want  int
	}{{nil, 0}, {map[string]string{"q": "b"}, 1}, {map[string]string{"q": "z"}, -1}} {
		if got := k.QosIndex(tc.annos); got != tc.want {
			t.Errorf("QosIndex(%v) = %d, want %d", tc.annos, got, tc.want)
		}
	}
	if (&Kind{}).QosIndex(map[string]string{"q": "a"}) != -1 {
		t.Error("a Kind without policies has none")
	}
}
