package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// View draws the screen from the model; it changes nothing.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion // click selects, the wheel scrolls (mouse.go)
	v.WindowTitle = "kubectl hami top"
	return v
}

// Render is the screen content: exactly height lines, none wider than the window.
func (m *Model) Render() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	body := m.bodyHeight()
	lines := m.header()
	var b []string
	switch {
	case m.overlay != overlayNone:
		b = m.renderOverlay(body)
	case m.connect != nil:
		b = m.renderConnect()
	default:
		b = m.current().render(m.shared(), body)
	}
	if len(b) > body {
		b = b[:body]
	}
	for len(b) < body {
		b = append(b, "")
	}
	lines = append(lines, b...)
	lines = append(lines, m.footer())
	if len(lines) > m.height {
		lines = lines[len(lines)-m.height:]
	}
	for i, l := range lines {
		lines[i] = fit(l, m.width)
	}
	return strings.Join(lines, "\n")
}

// header is the title, the counts, the notes and the tabs.
func (m *Model) header() []string {
	s, d := m.styles, m.data
	short := s.title.Render("kubectl hami top")
	if d.Context != "" {
		short += " · context " + d.Context
	}
	if ns := m.opts.OnlyNamespace; ns != "" {
		short += " · namespace " + ns
	}
	left := short + " · " + d.Source
	if ns := m.opts.OnlyNamespace; ns != "" {
		left = strings.TrimSuffix(short, " · namespace "+ns) + " · " + d.Source + " · namespace " + ns
	}
	state := "static"
	if d.Live {
		state = m.connHeader()
	}
	if m.connect != nil {
		state = m.connectHeader()
	}
	right := state
	if m.connect == nil && (!d.Live || m.conn.kind == connLive) { // no time while there is no data, or it is old
		right += " · updated " + d.Updated.Format("15:04:05")
	}
	if ansi.StringWidth(left)+ansi.StringWidth(right)+2 > m.width && (d.Live || m.connect != nil) {
		left = short // the connection's state before the server's address
	}
	title := spread(left, right, m.width)

	t := d.Totals
	counts := fmt.Sprintf("%d nodes · %d GPUs · %d GPU pods · ", t.Nodes, t.GPUs, t.Pods)
	if d.Live && m.conn.kind != connLive {
		counts = s.warn.Render("STALE") + " " + counts // the numbers are the last the API server gave
	}
	pend := fmt.Sprintf("%d pending", t.Pending)
	if t.Pending > 0 {
		pend = s.warn.Render(pend)
	}
	counts += pend + " │ mem " + s.pctText(t.UsedMem, t.Mem) + " · cores " + s.pctText(t.UsedCores, t.Cores) +
		fmt.Sprintf(" · slots %d/%d", t.UsedSlots, t.Slots)
	if m.width >= 120 {
		counts += fmt.Sprintf(" · %s of %s GPU memory allocated", mib(t.UsedMem), mib(t.Mem))
	}

	var notes []string
	if n := m.connNote(); d.Live && n != "" {
		notes = append(notes, n)
	} else if m.liveErr != "" {
		notes = append(notes, s.errText.Render("live updates stopped: "+m.liveErr))
	}
	if d.ConfigErr != "" {
		notes = append(notes, s.warn.Render("⚠ "+d.ConfigErr))
	}
	// The metrics note is short; a problem's text is long and is the one cut at the right edge.
	switch {
	case m.metrics == nil:
		notes = append(notes, s.dim.Render(noMetricsNote))
	case m.metrics.Note != "" && m.metrics.Warn:
		notes = append(notes, s.warn.Render(m.metrics.Note))
	case m.metrics.Note != "":
		notes = append(notes, s.dim.Render(m.metrics.Note))
	}
	if n := len(d.Problems); n > 0 {
		word := "problems"
		if n == 1 {
			word = "problem"
		}
		// p opens the list; the first problem is named here, where it fits. The "(p)" is never cut: the
		// notes before it are, when they leave it no room.
		tag := s.warn.Render(fmt.Sprintf("⚠ %d input %s (p)", n, word))
		before := strings.Join(notes, " · ")
		if before != "" {
			room := m.width - ansi.StringWidth(tag) - 5 // " · " before the tag, ":…" after it
			if ansi.StringWidth(before) > room {
				before = ansi.Truncate(before, max(room, 0), "…")
			}
			before += " · "
		}
		return []string{title, counts, before + tag + ": " + d.Problems[0].String(), m.tabs()}
	}
	return []string{title, counts, strings.Join(notes, " · "), m.tabs()}
}

// spread puts right at the right edge when both fit.
func spread(left, right string, width int) string {
	gap := width - ansi.StringWidth(left) - ansi.StringWidth(right)
	if gap < 2 {
		return left
	}
	return left + strings.Repeat(" ", gap) + right
}

// tabLabels are the tabs as drawn, unstyled, and the gap between them: " 1 Nodes " and "[2 Node]" side by
// side; below 100 columns "1 Nodes" with one space between, so that the count still fits beside them.
func (m *Model) tabLabels() (labels []string, gap string) {
	cur := m.tabOf(m.view)
	compact := m.width < 100
	for i, t := range m.tabInfos() {
		label := fmt.Sprintf("%d %s", i+1, t.name)
		switch {
		case i == cur:
			label = "[" + label + "]"
		case !compact:
			label = " " + label + " "
		}
		labels = append(labels, label)
	}
	if compact {
		gap = " "
	}
	return labels, gap
}

func (m *Model) tabs() string {
	s := m.styles
	var b strings.Builder
	cur := m.tabOf(m.view)
	labels, gap := m.tabLabels()
	for i, label := range labels {
		if i > 0 {
			b.WriteString(gap)
		}
		if i == cur {
			b.WriteString(s.tabActive.Render(label))
		} else {
			b.WriteString(s.tab.Render(label))
		}
	}
	t := m.current().rows()
	if t == nil || m.overlay != overlayNone {
		return b.String()
	}
	count, short := fmt.Sprintf("%d", t.total()), ""
	if t.filter != "" {
		short = fmt.Sprintf("%d of %d", t.shown(), t.total())
		count = "/" + t.filter + " " + short
	}
	// On a narrow screen the sort column loses its word, then the count goes.
	tabs := b.String()
	for _, info := range []string{"sort " + t.sortName() + " · " + count, t.sortName() + " · " + count, count, short} {
		if info == "" {
			break
		}
		if ansi.StringWidth(tabs)+ansi.StringWidth(info)+2 <= m.width {
			return spread(tabs, m.styles.dim.Render(info), m.width)
		}
	}
	return tabs
}

func (m *Model) footer() string {
	switch {
	case m.mode == modeFilter:
		return "/" + m.input.View()
	case m.mode == modeCommand:
		return ":" + m.input.View() + m.styles.dim.Render(m.promptHint())
	case m.status != "":
		return m.styles.warn.Render(m.status)
	}
	return m.shortHelp()
}

// shortHelp is the footer's key line, fitted to the width: the least needed keys go first, and
// "? help • q quit" always stays, so a narrow terminal still says how to learn the rest and how to leave.
func (m *Model) shortHelp() string {
	h := m.help
	h.SetWidth(0) // measure whole; the fitting is done here, not by cutting the line
	keep := m.keys.ShortHelp()
	tail := keep[len(keep)-2:] // help, quit
	opt := keep[:len(keep)-2]
	for {
		line := h.ShortHelpView(append(append([]key.Binding{}, opt...), tail...))
		if ansi.StringWidth(line) <= m.width || len(opt) == 0 {
			return line
		}
		opt = opt[:len(opt)-1]
	}
}

func (m *Model) renderHelp() []string {
	s := m.styles
	lines := []string{s.title.Render("Keys") + s.dim.Render("  (esc or ? closes)"), ""}
	infos, tabs := m.infos(), m.tabInfos()
	var viewKeys []key.Binding
	for _, i := range infos {
		viewKeys = append(viewKeys, i.keys...)
	}
	lines = append(lines, splitLines(m.help.FullHelpView(m.keys.FullHelp(viewKeys)))...)
	lines = append(lines, "")
	paras := [][2]string{
		{"Views", helpViews(tabs)},
		{"Jump", helpJump(tabs)},
		{"Drill", helpDrill(infos)},
		{"Mouse", "click selects a row, a second click opens it; the wheel scrolls"},
	}
	if t := m.current().rows(); t != nil && len(t.cols) > 0 {
		paras = append(paras, [2]string{"Sort", "shift+letter sorts " + m.current().info().name + " by a column, again reverses it: " + t.sortHelp()})
	}
	paras = append(paras, [2]string{"Scope", ":ns NAME shows one namespace's pending pods, quotas and pods; 0 all namespaces"},
		[2]string{"Object", "y the selected object's YAML, d its description (kubectl describe), as the cluster has them now"})
	for _, i := range infos {
		paras = append(paras, i.help...)
	}
	for _, p := range append(paras, [][2]string{
		{"Bars", "allocated of total; " + s.ok.Render("ok") + " " + s.warn.Render("≥70% warn") + " " + s.crit.Render("≥90% critical") +
			"; █ used ▒ allocated unused when live usage is known"},
		{"State", "nN NUMA node · unhealthy · cordoned · MIG; read-only: nothing is ever written to the cluster"},
		{"Problems", "p (or :problems) lists every input problem the header counts"},
	}...) {
		lines = append(lines, helpPara(s.bold.Render(fmt.Sprintf("%-8s", p[0])), p[1], m.width)...)
	}
	return append(lines, helpReasons(s, m.width)...)
}

// helpReasons lists every reason code of the engine's gate table with what a user can change about it.
func helpReasons(s styles, width int) []string {
	lines := []string{"", s.title.Render("Reason codes") + s.dim.Render("  (why a node or GPU was ruled out, and what to change)"), ""}
	seen := map[engine.Code]bool{}
	longest := 0
	for _, g := range engine.Gates {
		longest = max(longest, len(g.Code))
	}
	// A code is listed once, where its own row ranks (engine.GateOf: the engine's row before a family's that
	// shares the code), with that row's hint.
	for i := range engine.Gates {
		g := &engine.Gates[i]
		if seen[g.Code] || engine.GateOf(g.Code) != g {
			continue
		}
		seen[g.Code] = true
		lines = append(lines, helpPara(s.bold.Render(fmt.Sprintf("%-*s", longest, g.Code)), g.Hint, width)...)
	}
	return lines
}

// helpPara is a labelled help paragraph wrapped to the width, continuation lines under the text.
func helpPara(label, text string, width int) []string {
	indent := ansi.StringWidth(label) + 1
	if label == "" {
		indent = 0
	}
	if width-indent < 20 {
		return []string{strings.TrimLeft(label+" "+text, " ")}
	}
	out := strings.Split(ansi.Wrap(text, width-indent, ""), "\n")
	for i := range out {
		if i == 0 && label != "" {
			out[i] = label + " " + out[i]
		} else if i > 0 {
			out[i] = strings.Repeat(" ", indent) + out[i]
		}
	}
	return out
}

// wrapProse wraps the prose lines of a CLI text to the width and leaves its tables (lines with runs of
// spaces between columns) as they are, to be scrolled sideways. Continuation lines get a hanging indent.
func wrapProse(text string, width int) string {
	if width < 20 {
		return text
	}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(l, " ")
		indent := len(l) - len(trimmed)
		if ansi.StringWidth(l) <= width || strings.Contains(trimmed, "   ") || indent > width/2 {
			out = append(out, l)
			continue
		}
		for i, w := range wrapWords(trimmed, width-indent-2) {
			pad := indent
			if i > 0 {
				pad += 2
			}
			out = append(out, strings.Repeat(" ", pad)+w)
		}
	}
	return strings.Join(out, "\n")
}

// wrapWords breaks text at spaces only, so a name (gpu-t4-03, inference/llm-serve-2) is never split; a
// word longer than the width is cut where it must be.
func wrapWords(text string, width int) []string {
	var out []string
	cur := ""
	for _, w := range strings.Fields(text) {
		switch {
		case cur == "":
			cur = w
		case ansi.StringWidth(cur)+1+ansi.StringWidth(w) <= width:
			cur += " " + w
		default:
			out = append(out, cur)
			cur = w
		}
		for ansi.StringWidth(cur) > width {
			out = append(out, ansi.Truncate(cur, width, ""))
			cur = ansi.TruncateLeft(cur, width, "")
		}
	}
	return append(out, cur)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
