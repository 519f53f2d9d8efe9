package tui

import "fmt"

// overlayID is a page shown over the current view (its tab stays marked): the keys or the input problems.
type overlayID int

const (
	overlayNone overlayID = iota
	overlayHelp
	overlayProblems
)

// openOverlay shows an overlay from its top; opening the one shown closes it.
func (m *Model) openOverlay(o overlayID) {
	if m.overlay == o {
		m.overlay = overlayNone
		return
	}
	m.overlay, m.overlayOff = o, 0
}

// overlayLines is the overlay's whole text, one entry a line.
func (m *Model) overlayLines() []string {
	switch m.overlay {
	case overlayHelp:
		return m.renderHelp()
	case overlayProblems:
		return m.renderProblems()
	}
	return nil
}

// renderOverlay is the part of the overlay that fits the body, from its scroll offset.
func (m *Model) renderOverlay(height int) []string {
	lines := m.overlayLines()
	m.overlayOff = min(m.overlayOff, max(len(lines)-height, 0))
	return lines[m.overlayOff:]
}

func (m *Model) scrollOverlay(delta int) {
	n := len(m.overlayLines())
	m.overlayOff = min(max(m.overlayOff+delta, 0), max(n-m.bodyHeight(), 0))
}

// renderProblems lists every input problem the header counts: the object, the field and what is wrong,
// one problem a paragraph, wrapped to the width.
func (m *Model) renderProblems() []string {
	s := m.styles
	ps := m.data.Problems
	word := "problems"
	if len(ps) == 1 {
		word = "problem"
	}
	lines := []string{s.title.Render(fmt.Sprintf("%d input %s", len(ps), word)) +
		s.dim.Render("  (esc or p closes; ↑↓ scroll)"), ""}
	if len(ps) == 0 {
		return append(lines, s.dim.Render("No input problems: every annotation and quota the engine read was well formed."))
	}
	lines = append(lines, helpPara("", "Bad input the engine met and worked around: fix the field named, the rest of the cluster is still shown.", m.width)...)
	lines = append(lines, "")
	for i, p := range ps {
		label := s.warn.Render(fmt.Sprintf("%3d", i+1))
		lines = append(lines, helpPara(label, s.bold.Render(p.Kind+" "+p.Object)+" "+p.Field+": "+p.Message, m.width)...)
	}
	return lines
}
