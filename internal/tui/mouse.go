package tui

import (
	"fmt"

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
	switch m.view {
	case viewVerdict:
		if dir < 0 {
			m.pager.ScrollUp(wheelStep)
		} else {
			m.pager.ScrollDown(wheelStep)
		}
		return nil
	case viewGPU:
		m.scrollGPU(dir * wheelStep)
		return nil
	case viewWhatIf:
		if dir < 0 {
			m.form.answer.ScrollUp(wheelStep)
		} else {
			m.form.answer.ScrollDown(wheelStep)
		}
		return nil
	}
	if t := m.tableOf(m.view); t != nil {
		t.move(dir)
		m.followNodes()
	}
	return nil
}

// followNodes keeps the Node view on the node selected in Nodes.
func (m *Model) followNodes() {
	if m.view == viewNodes {
		if sel := m.nodes.selectedKey(); sel != "" {
			m.detail = sel
		}
	}
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
		if v, ok := tabAt(x); ok {
			m.overlay = overlayNone
			m.switchTo(v)
			return m.enterView()
		}
		return nil
	case y < headerLines || y >= headerLines+m.bodyHeight() || m.overlay != overlayNone:
		return nil
	}
	t := m.tableOf(m.view)
	if t == nil {
		return nil
	}
	line := y - headerLines - (m.bodyHeight() - m.tableHeight(m.view)) // lines into the table's rows
	if line < 0 {
		return nil
	}
	for _, p := range t.visible(m.tableHeight(m.view)) {
		h := t.rowHeight(t.order[p])
		if line < h {
			if p == t.cursor {
				return m.drill()
			}
			t.cursor = p
			m.followNodes()
			return nil
		}
		line -= h
	}
	return nil
}

// tabAt is the view whose tab label covers column x of the tabs line (tabs() draws each as " N Name ").
func tabAt(x int) (viewID, bool) {
	pos := 0
	for i, name := range viewNames {
		w := ansi.StringWidth(fmt.Sprintf(" %d %s ", i+1, name))
		if x >= pos && x < pos+w {
			return viewID(i), true
		}
		pos += w
	}
	return 0, false
}
