package tui

import (
	"slices"
	"testing"
)

// TestFilterExactWords: a key=value word from a drill-down matches whole words only (queue=q1 is not q10),
// the rest of the filter stays fuzzy.
func TestFilterExactWords(t *testing.T) {
	tb := newTable()
	tb.setRows([]row{{key: "a", text: "team/a CardX queue=q1"}, {key: "b", text: "team/b CardX queue=q10"}, {key: "c", text: "other/c queue=q1"}})
	for filter, want := range map[string][]string{
		"queue=q1":      {"a", "c"},
		"queue=q10":     {"b"},
		"queue=q1 team": {"a"},
		"tm/b":          {"b"},
	} {
		tb.setFilter(filter)
		var got []string
		for _, i := range tb.order {
			got = append(got, tb.rows[i].key)
		}
		if !slices.Equal(got, want) {
			t.Errorf("filter %q: %v, want %v", filter, got, want)
		}
	}
}
