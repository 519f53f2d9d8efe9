package tui

import (
	"cmp"
	"slices"
	"strings"

	"github.com/sahilm/fuzzy"
)

// sortCol is a column a table can sort by; desc is its natural direction (fullest first for usage).
type sortCol struct {
	name string
	desc bool
}

// sortKey is one row's value in a sort column: a number, or a string when str is set.
type sortKey struct {
	n   float64
	s   string
	str bool
}

func num(v float64) sortKey { return sortKey{n: v} }
func str(s string) sortKey  { return sortKey{s: s, str: true} }

// row is what a table knows of a row: identity, the text the filter matches and the sort values (one per
// column). Rendering is the view's job; it gets the row's index into the items it gave. A long table's view
// leaves text and keys empty and gives a rowInfo instead (setRowsFrom): a row's text is then made only when a
// filter is typed, and its sort value only for the column the table sorts by.
type row struct {
	key    string
	text   string
	keys   []sortKey
	height int // lines the row takes; 0 counts as 1
}

// rowInfo answers, for the row at an index, what a row given without text and keys would hold.
type rowInfo struct {
	text    func(i int) string
	sortKey func(i, col int) sortKey
}

// table is the list behind every view: fuzzy filter, sort by a column, a cursor and a scroll offset. Rows
// of different heights are allowed (a node and its GPU lines). Only the rows on screen are ever rendered.
type table struct {
	cols    []sortCol
	sortIdx int
	desc    bool
	rows    []row
	info    rowInfo // the rows' text and sort values, when the rows do not carry them (setRowsFrom)
	order   []int   // indexes into rows: filtered, sorted
	cursor  int     // position in order
	offset  int     // first position in order on screen
	filter  string

	// texts and colKeys (the values of column keysCol) are made from info once per set of rows, when first
	// needed: by a filter, by a sort.
	texts   []string
	colKeys []sortKey
	keysCol int
	// later sets the rows when the table is first used (setRowsLater).
	later func()
}

func newTable(cols ...sortCol) *table {
	t := &table{cols: cols}
	if len(cols) > 0 {
		t.desc = cols[0].desc
	}
	return t
}

// setRows replaces the rows, keeping the selected row selected when it is still there.
func (t *table) setRows(rows []row) { t.setRowsFrom(rows, rowInfo{}) }

// setRowsFrom replaces the rows by rows whose text and sort values info gives.
func (t *table) setRowsFrom(rows []row, info rowInfo) {
	t.later = nil
	sel := t.selectedKey()
	t.rows, t.info = rows, info
	t.texts, t.colKeys = nil, nil
	t.refresh(sel)
}

// setRowsLater leaves the rows to build, which sets them (setRows, setRowsFrom) when the table is first
// used: a view off screen makes its rows when it is shown, not on every change of the data.
func (t *table) setRowsLater(build func()) { t.later = build }

// waiting is true while the rows wait for their first use (setRowsLater).
func (t *table) waiting() bool { return t.later != nil }

// ready builds the rows that wait for their first use.
func (t *table) ready() {
	if build := t.later; build != nil {
		t.later = nil
		build()
	}
}

// text is the filter's text of row i.
func (t *table) text(i int) string {
	if t.info.text == nil {
		return t.rows[i].text
	}
	if t.texts == nil {
		t.texts = make([]string, len(t.rows))
		for j := range t.rows {
			t.texts[j] = t.info.text(j)
		}
	}
	return t.texts[i]
}

// columnKeys are the rows' values in column col, made once per set of rows and column.
func (t *table) columnKeys(col int) []sortKey {
	if t.colKeys != nil && t.keysCol == col {
		return t.colKeys
	}
	keys := t.colKeys[:0]
	if cap(keys) < len(t.rows) {
		keys = make([]sortKey, 0, len(t.rows))
	}
	for i := range t.rows {
		switch {
		case t.info.sortKey != nil:
			keys = append(keys, t.info.sortKey(i, col))
		case col < len(t.rows[i].keys):
			keys = append(keys, t.rows[i].keys[col])
		default:
			keys = append(keys, sortKey{})
		}
	}
	t.colKeys, t.keysCol = keys, col
	return keys
}

func (t *table) setFilter(f string) {
	t.ready()
	if f == t.filter {
		return
	}
	sel := t.selectedKey()
	t.filter = f
	t.refresh(sel)
}

// cycleSort moves to the next sort column, in its natural direction.
func (t *table) cycleSort() {
	if len(t.cols) == 0 {
		return
	}
	t.ready()
	sel := t.selectedKey()
	t.sortIdx = (t.sortIdx + 1) % len(t.cols)
	t.desc = t.cols[t.sortIdx].desc
	t.refresh(sel)
}

func (t *table) reverse() {
	t.ready()
	sel := t.selectedKey()
	t.desc = !t.desc
	t.refresh(sel)
}

// sortName says how the table is sorted, e.g. "memory ↓".
func (t *table) sortName() string {
	if len(t.cols) == 0 {
		return ""
	}
	arrow := "↑"
	if t.desc {
		arrow = "↓"
	}
	return t.cols[t.sortIdx].name + " " + arrow
}

// rowSource is the rows the fuzzy filter sees: those listed in idx.
type rowSource struct {
	t   *table
	idx []int
}

func (s rowSource) String(i int) string { return s.t.text(s.idx[i]) }
func (s rowSource) Len() int            { return len(s.idx) }

// splitFilter separates exact key=value words ("queue=q1", from a drill-down) from the fuzzy rest: queue=q1
// must not match the pods of q10.
func splitFilter(f string) (exact []string, fuzzyPart string) {
	var rest []string
	for _, w := range strings.Fields(f) {
		if strings.Contains(w, "=") {
			exact = append(exact, w)
		} else {
			rest = append(rest, w)
		}
	}
	return exact, strings.Join(rest, " ")
}

func hasWords(text string, words []string) bool {
	fields := strings.Fields(text)
	for _, w := range words {
		if !slices.Contains(fields, w) {
			return false
		}
	}
	return true
}

func (t *table) refresh(sel string) {
	t.order = t.order[:0]
	if t.filter == "" {
		for i := range t.rows {
			t.order = append(t.order, i)
		}
	} else {
		exact, rest := splitFilter(t.filter)
		src := rowSource{t: t}
		for i := range t.rows {
			if hasWords(t.text(i), exact) {
				src.idx = append(src.idx, i)
			}
		}
		if rest == "" {
			t.order = append(t.order, src.idx...)
		} else {
			for _, m := range fuzzy.FindFromNoSort(rest, src) {
				t.order = append(t.order, src.idx[m.Index])
			}
		}
	}
	if len(t.cols) > 0 {
		t.sort()
	}
	t.cursor = 0
	if sel != "" {
		for i, r := range t.order {
			if t.rows[r].key == sel {
				t.cursor = i
				break
			}
		}
	}
	t.clampCursor()
}

// sort orders the rows by the sort column, then by key. Rows equal in both keep their order (by index: the
// order is total, so the unstable sort gives what a stable one would); rows already in order are not sorted.
func (t *table) sort() {
	keys, rows, desc := t.columnKeys(t.sortIdx), t.rows, t.desc
	compare := func(a, b int) int {
		ka, kb := &keys[a], &keys[b]
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
		if c == 0 {
			c = cmp.Compare(a, b)
		}
		return c
	}
	if !slices.IsSortedFunc(t.order, compare) {
		slices.SortFunc(t.order, compare)
	}
}

func (t *table) clampCursor() {
	t.cursor = min(max(t.cursor, 0), max(len(t.order)-1, 0))
	t.offset = min(max(t.offset, 0), max(len(t.order)-1, 0))
}

// selected is the index (into rows) under the cursor, or -1.
func (t *table) selected() int {
	t.ready()
	if len(t.order) == 0 {
		return -1
	}
	return t.order[t.cursor]
}

func (t *table) selectedKey() string {
	if i := t.selected(); i >= 0 {
		return t.rows[i].key
	}
	return ""
}

// selectKey moves the cursor to the row with that key; false when it is filtered out or missing.
func (t *table) selectKey(key string) bool {
	t.ready()
	for i, r := range t.order {
		if t.rows[r].key == key {
			t.cursor = i
			return true
		}
	}
	return false
}

func (t *table) move(delta int) {
	t.ready()
	t.cursor += delta
	t.clampCursor()
}

func (t *table) home() { t.ready(); t.cursor = 0 }
func (t *table) end()  { t.ready(); t.cursor = max(len(t.order)-1, 0) }

// shown is the number of rows the filter leaves; total is every row.
func (t *table) shown() int { t.ready(); return len(t.order) }
func (t *table) total() int { t.ready(); return len(t.rows) }

func (t *table) rowHeight(i int) int {
	return max(t.rows[i].height, 1)
}

// scroll keeps the cursor's row on a screen of height lines.
func (t *table) scroll(height int) {
	t.ready()
	t.clampCursor()
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	for t.offset < t.cursor {
		lines := 0
		for p := t.offset; p <= t.cursor; p++ {
			lines += t.rowHeight(t.order[p])
		}
		if lines <= height {
			break
		}
		t.offset++
	}
	// A taller screen (or fewer rows) must not leave blank lines below the last row while rows above
	// the offset are hidden: pull the offset back as far as the rows from it to the end still fit.
	if t.offset > 0 {
		lines := 0
		for p := t.offset; p < len(t.order); p++ {
			lines += t.rowHeight(t.order[p])
		}
		for t.offset > 0 {
			h := t.rowHeight(t.order[t.offset-1])
			if lines+h > height {
				break
			}
			lines += h
			t.offset--
		}
	}
}

// visible lists the positions (into order) on a screen of height lines, from the offset.
func (t *table) visible(height int) []int {
	t.ready()
	var out []int
	lines := 0
	for p := t.offset; p < len(t.order) && lines < height; p++ {
		out = append(out, p)
		lines += t.rowHeight(t.order[p])
	}
	return out
}

// pageSize is how many rows a page down moves: the rows of one screen, at least one.
func (t *table) pageSize(height int) int {
	return max(len(t.visible(height))-1, 1)
}

// reservedSortLetters are capitals other keys own: G (last row) and S (reverse the sort).
const reservedSortLetters = "GS"

// sortLetters are the shift-letter keys of the sort columns, k9s-style: the first letter of a column's name
// that no other key and no earlier column holds ("N" name, "M" memory; "gpus" gets "P", G being taken).
func (t *table) sortLetters() []rune {
	out := make([]rune, len(t.cols))
	taken := map[rune]bool{}
	for _, r := range reservedSortLetters {
		taken[r] = true
	}
	for i, c := range t.cols {
		for _, r := range strings.ToUpper(c.name) {
			if r >= 'A' && r <= 'Z' && !taken[r] {
				out[i], taken[r] = r, true
				break
			}
		}
	}
	return out
}

// sortByLetter sorts by the column of a shift-letter key, in its natural direction; the same key again
// reverses it. False when no column has that letter.
func (t *table) sortByLetter(r rune) bool {
	for i, l := range t.sortLetters() {
		if l != r || l == 0 {
			continue
		}
		t.ready()
		sel := t.selectedKey()
		if i == t.sortIdx {
			t.desc = !t.desc
		} else {
			t.sortIdx, t.desc = i, t.cols[i].desc
		}
		t.refresh(sel)
		return true
	}
	return false
}

// sortHelp is the sort keys for help: "N name · M memory · …".
func (t *table) sortHelp() string {
	var parts []string
	for i, l := range t.sortLetters() {
		if l != 0 {
			parts = append(parts, string(l)+" "+t.cols[i].name)
		}
	}
	return strings.Join(parts, " · ")
}
