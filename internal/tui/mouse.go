package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Mouse, k9s-style: a click on a row selects it and a second click on the selected row opens it (as enter);
// a click on a tab shows that view; a click on the "⚠ N input problems" note opens the problems; the wheel
// moves the selection in a table and scrolls a page (why pending, a GPU, the what-if answer, the help).

// wheelStep is how many lines one notch of the wheel scrolls a page.
const wheelStep = 3

func (m *Model) handleMouse(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			return m.wheel(-1)
		case tea.MouseWheelDown:
			return m.wheel(1)
		}
	case tea.MouseClickMsg:
		if msg.Button == tea.MouseLeft && m.mode == modeNormal {
			return m.click(msg.X, msg.Y)
		}
	}
	return nil
}

func (m *Model) wheel(dir int) tea.Cmd {
	if m.overlay != overlayNone {
		m.scrollOverlay(dir * wheelStep)
		return nil
	}
	m.current().wheel(m.shared(), dir)
	return nil
}

// click acts on the screen cell (x, y), 0-based from the top left.
func (m *Model) click(x, y int) tea.Cmd {
	switch {
	case y == 2: // the notes line
		if len(m.data.Problems) > 0 {
			m.openOverlay(overlayProblems)
		}
		return nil
	case y == 3: // the tabs
		if n, ok := m.tabAt(x); ok {
			m.overlay = overlayNone
			return m.showTab(n)
		}
		return nil
	case y < headerLines || y >= headerLines+m.bodyHeight() || m.overlay != overlayNone:
		return nil
	}
	v := m.current()
	t := v.rows()
	if t == nil {
		return nil
	}
	line := y - headerLines - v.info().headLines // lines into the table's rows
	if line < 0 {
		return nil
	}
	for _, p := range t.visible(m.tableHeight(v)) {
		h := t.rowHeight(t.order[p])
		if line < h {
			if p == t.cursor {
				return v.drill(m.shared())
			}
			return v.update(m.shared(), selectMsg{row: p})
		}
		line -= h
	}
	return nil
}

// tabAt is the tab (0-based) whose label covers column x of the tabs line (as tabLabels draws them).
func (m *Model) tabAt(x int) (int, bool) {
	pos := 0
	labels, gap := m.tabLabels()
	for i, l := range labels {
		w := ansi.StringWidth(l)
		if x >= pos && x < pos+w {
			return i, true
		}
		pos += w + len(gap)
	}
	return 0, false
}
