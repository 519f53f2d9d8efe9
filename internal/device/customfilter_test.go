package device

import "testing"

// TestCustomFilterRow: the block sets HAMi's code and the sentence, and keeps what the family gave.
func TestCustomFilterRow(t *testing.T) {
	check := func(*Dev) Outcome { return Outcome{Fail: true} }
	r := CustomFilterRow(Row{Number: "13x", Name: "x", Meaning: "m", Numbers: "n", Hint: "h", Check: check})
	if r.Code != "CardNotFoundCustomFilterRule" || r.Number != "13x" || r.Name != "x" || r.Meaning != "m" || r.Numbers != "n" || r.Hint != "h" || r.Check == nil {
		t.Fatalf("row %+v", r)
	}
	if got, want := r.Say(Saying{GPUs: 2, Detail: "d", Where: "node n1, GPU 0"}), "2 device(s): d (node n1, GPU 0)"; got != want {
		t.Errorf("sentence %q, want %q", got, want)
	}
	k := Kind{Vendor: "v", Name: "N", Word: "W", Register: "r", ToAllocate: "t", Allocated: "a", Count: "c", Rows: []Row{r}}
	if err := k.Validate(); err != nil {
		t.Errorf("a Kind with the row: %v", err)
	}
}

// TestOneDevice: a device other than the one an earlier container took fails with the family's why; nothing
// taken (or no walk hook) passes.
func TestOneDevice(t *testing.T) {
	check := OneDevice("one per pod")
	for _, tc := range []struct {
		name  string
		taken func() string
		fail  string
	}{
		{"no walk hook", nil, ""},
		{"nothing taken", func() string { return "" }, ""},
		{"another device taken", func() string { return "gpu-0" }, "an earlier container of the pod took gpu-0; one per pod"},
	} {
		o := check(&Dev{UUID: "gpu-1", OtherTakenF: tc.taken})
		if o.Skip || o.Fail != (tc.fail != "") || o.Detail != tc.fail {
			t.Errorf("%s: %+v, want fail %q", tc.name, o, tc.fail)
		}
	}
}
