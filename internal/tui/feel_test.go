package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestResizeKeepsPlace: at 80x24, G (last node), then a 200x60 window: every node fits, so the first one is
// shown again and no body line is left blank below the rows while rows above are hidden.
func TestResizeKeepsPlace(t *testing.T) {
	m := newDemo(t, 80, 24)
	press(m, "G")
	if strings.Contains(screen(m), "cpu-01 ") {
		t.Fatalf("at 80x24 after G the first node is still shown; the test needs a scrolled table:\n%s", screen(m))
	}
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	got := screen(m)
	if m.nodes.offset != 0 {
		t.Errorf("offset %d after growing, want 0 (every node fits)", m.nodes.offset)
	}
	for _, want := range []string{"cpu-01", "gpu-a100-01", "gpu-t4-03"} {
		if !strings.Contains(got, want) {
			t.Errorf("200x60 after G lacks %s:\n%s", want, got)
		}
	}
	if !strings.HasPrefix(selectedLine(t, m), "▸ gpu-t4-03") {
		t.Errorf("cursor moved off the last node: %q", selectedLine(t, m))
	}
	// Shrinking again keeps the cursor's row on screen.
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if !strings.Contains(screen(m), "gpu-t4-03") {
		t.Errorf("80x24 again: the selected node is off screen:\n%s", screen(m))
	}
}

// TestTableScrollFills: the table's offset never leaves room below the last row while rows above are hidden.
func TestTableScrollFills(t *testing.T) {
	tb := newTable()
	var rows []row
	for i := range 30 {
		rows = append(rows, row{key: string(rune('a' + i)), height: 1 + i%3})
	}
	tb.setRows(rows)
	tb.end()
	tb.scroll(10)
	if tb.offset == 0 {
		t.Fatalf("offset 0 on a 10-line screen at the last of 30 rows")
	}
	for _, h := range []int{10, 20, 40, 100} {
		tb.scroll(h)
		lines := 0
		for p := tb.offset; p < len(tb.order); p++ {
			lines += tb.rowHeight(tb.order[p])
		}
		if lines > h {
			t.Errorf("height %d: rows from offset %d take %d lines, more than the screen", h, tb.offset, lines)
		}
		if tb.offset > 0 && lines+tb.rowHeight(tb.order[tb.offset-1]) <= h {
			t.Errorf("height %d: offset %d leaves room for the row above (%d lines used)", h, tb.offset, lines)
		}
	}
}
