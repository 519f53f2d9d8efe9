package tui

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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

// stableOrder is the order the table gave before its sort became unstable: a stable sort of the row
// indexes by the column (reversed when desc), then by key.
func stableOrder(rows []row, col int, desc bool) []int {
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ka, kb := rows[a].keys[col], rows[b].keys[col]
		var c int
		if ka.str || kb.str {
			c = strings.Compare(ka.s, kb.s)
		} else {
			c = cmp.Compare(ka.n, kb.n)
		}
		if desc {
			c = -c
		}
		if c == 0 {
			c = strings.Compare(rows[a].key, rows[b].key)
		}
		return c
	})
	return order
}

// TestTableSortIsStable: the table's sort (unstable, on a total order) gives the stable sort's order, with
// many equal values and repeated keys, whether the rows carry their keys or a rowInfo gives them.
func TestTableSortIsStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for round := range 50 {
		n := 1 + rng.IntN(300)
		rows := make([]row, n)
		for i := range rows {
			rows[i] = row{key: fmt.Sprintf("k%02d", rng.IntN(n/3+1)), // repeated keys
				keys: []sortKey{num(float64(rng.IntN(5))), str(fmt.Sprintf("s%d", rng.IntN(4)))}}
		}
		info := rowInfo{text: func(i int) string { return rows[i].key }, sortKey: func(i, col int) sortKey { return rows[i].keys[col] }}
		bare := make([]row, n)
		for i := range bare {
			bare[i] = row{key: rows[i].key}
		}
		for col := range 2 {
			for _, desc := range []bool{false, true} {
				want := stableOrder(rows, col, desc)
				for name, tb := range map[string]*table{"rows": newTable(sortCol{"n", false}, sortCol{"s", false}),
					"rowInfo": newTable(sortCol{"n", false}, sortCol{"s", false})} {
					tb.sortIdx, tb.desc = col, desc
					if name == "rows" {
						tb.setRows(rows)
					} else {
						tb.setRowsFrom(bare, info)
					}
					if !slices.Equal(tb.order, want) {
						t.Fatalf("round %d, %s, column %d, desc %v: order %v, want %v", round, name, col, desc, tb.order, want)
					}
				}
			}
		}
	}
}

// TestTableRowsLater: rows left to setRowsLater are built once, at the table's first use, and the row
// selected before stays selected.
func TestTableRowsLater(t *testing.T) {
	tb := newTable(sortCol{"name", false})
	tb.setRows([]row{{key: "a", keys: []sortKey{str("a")}}, {key: "b", keys: []sortKey{str("b")}}})
	tb.move(1)
	builds := 0
	tb.setRowsLater(func() {
		builds++
		tb.setRows([]row{{key: "c", keys: []sortKey{str("c")}}, {key: "b", keys: []sortKey{str("b")}}, {key: "a", keys: []sortKey{str("a")}}})
	})
	if !tb.waiting() || builds != 0 || len(tb.rows) != 2 {
		t.Fatalf("setRowsLater built at once: waiting %v, %d builds, %d rows", tb.waiting(), builds, len(tb.rows))
	}
	if got := tb.selectedKey(); got != "b" || builds != 1 {
		t.Fatalf("selected %q after %d builds, want b after 1", got, builds)
	}
	if tb.total() != 3 || tb.waiting() || builds != 1 {
		t.Fatalf("%d rows, waiting %v, %d builds; want 3 rows, built once", tb.total(), tb.waiting(), builds)
	}
	if got := tb.rows[tb.order[0]].key; got != "a" {
		t.Errorf("first row %q, want a (sorted by name)", got)
	}
}
