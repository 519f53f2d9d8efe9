package tui

import (
	"fmt"
	"image/color"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Colour thresholds, as nvitop and k9s use them: warn from 70 %, critical from 90 %.
const (
	warnPercent     = 70
	criticalPercent = 90
)

// styles is the one style set of the UI. With noColor every style keeps only attributes (bold, reverse),
// so NO_COLOR terminals still see the selection and the active tab.
type styles struct {
	noColor bool

	title, dim, bold, header, tab, tabActive, selected, colHeader lipgloss.Style
	ok, warn, crit, na, errText, live                             lipgloss.Style

	help  help.Styles
	input textinput.Styles
}

func newStyles(dark, noColor bool) styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, darkc string) color.Color {
		if noColor {
			return lipgloss.NoColor{}
		}
		return ld(lipgloss.Color(light), lipgloss.Color(darkc))
	}
	fg := func(light, darkc string) lipgloss.Style { return lipgloss.NewStyle().Foreground(c(light, darkc)) }
	s := styles{noColor: noColor}
	s.title = fg("#005f87", "#5fd7ff").Bold(true)
	s.dim = fg("#6c6c6c", "#8a8a8a")
	s.bold = lipgloss.NewStyle().Bold(true)
	s.header = fg("#303030", "#d0d0d0")
	s.tab = fg("#4e4e4e", "#a8a8a8")
	s.tabActive = lipgloss.NewStyle().Bold(true).Reverse(true)
	s.selected = lipgloss.NewStyle().Reverse(true)
	s.colHeader = fg("#005f87", "#87afd7").Bold(true)
	s.ok = fg("#008700", "#5fd75f")
	s.warn = fg("#af8700", "#ffd75f")
	s.crit = fg("#d70000", "#ff5f5f")
	s.na = s.dim
	s.errText = fg("#d70000", "#ff5f5f").Bold(true)
	s.live = fg("#0087af", "#5fafff")
	key := fg("#005f87", "#87afd7")
	s.help = help.Styles{ShortKey: key, ShortDesc: s.dim, ShortSeparator: s.dim, Ellipsis: s.dim, FullKey: key, FullDesc: s.dim, FullSeparator: s.dim}
	plain := lipgloss.NewStyle()
	state := textinput.StyleState{Text: plain, Placeholder: s.dim, Suggestion: s.dim, Prompt: plain}
	// A static cursor: no blink timer redrawing the screen twice a second.
	s.input = textinput.Styles{Focused: state, Blurred: state, Cursor: textinput.CursorStyle{Color: c("#303030", "#d0d0d0"), Shape: tea.CursorBlock}}
	return s
}

// level is the style of a percentage: ok, warn (>= 70) or critical (>= 90).
func (s styles) level(pct int64) lipgloss.Style {
	switch {
	case pct >= criticalPercent:
		return s.crit
	case pct >= warnPercent:
		return s.warn
	}
	return s.ok
}

func percent(used, total int64) int64 {
	if total <= 0 {
		return 0
	}
	return used * 100 / total
}

// eighths are the partial blocks of a bar cell, from empty to seven eighths.
var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// bar draws used of total in width cells with eighth-block resolution, coloured by the thresholds. When live
// is 0 or more (memory actually in use, from the agent), it is overlaid: cells up to live are solid, the rest
// of the allocation is shaded ("allocated but unused"), as nvtop overlays two values on one bar.
func (s styles) bar(width int, used, total, live int64) string {
	if width <= 0 {
		return ""
	}
	if total <= 0 {
		return s.dim.Render(strings.Repeat("·", width))
	}
	used = min(max(used, 0), total)
	st := s.level(percent(used, total))
	if live >= 0 {
		live = min(live, total)
		liveCells := int(live * int64(width) / total)
		allocCells := int((used*int64(width) + total - 1) / total)
		allocCells = max(allocCells, liveCells)
		return st.Render(strings.Repeat("█", liveCells)+strings.Repeat("▒", allocCells-liveCells)) +
			s.dim.Render(strings.Repeat("░", width-allocCells))
	}
	units := int(used * int64(width) * 8 / total)
	if used > 0 && units == 0 {
		units = 1 // anything allocated shows
	}
	full, part := units/8, units%8
	filled := strings.Repeat("█", full) + eighths[part]
	rest := width - full
	if part > 0 {
		rest--
	}
	return st.Render(filled) + s.dim.Render(strings.Repeat("░", rest))
}

// pct renders a percentage in its threshold style, right-aligned in 4 cells.
func (s styles) pct(used, total int64) string {
	if total <= 0 {
		return s.na.Render(padLeft("-", 4))
	}
	p := percent(used, total)
	return s.level(p).Render(padLeft(fmt.Sprintf("%d%%", p), 4))
}

// pctText is a percentage in its threshold style, unpadded.
func (s styles) pctText(used, total int64) string {
	if total <= 0 {
		return s.na.Render("-")
	}
	p := percent(used, total)
	return s.level(p).Render(fmt.Sprintf("%d%%", p))
}

// mib formats MiB compactly: 800M, 7.8G, 80G, 1.2T.
func mib(v int64) string {
	switch {
	case v < 1024:
		return fmt.Sprintf("%dM", v)
	case v < 10*1024:
		return trimZero(fmt.Sprintf("%.1f", float64(v)/1024)) + "G"
	case v < 1024*1024:
		return fmt.Sprintf("%dG", (v+512)/1024)
	}
	return trimZero(fmt.Sprintf("%.1f", float64(v)/(1024*1024))) + "T"
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// width-aware helpers: every cell is cut or padded to its display width, so columns line up with ANSI
// styles and wide characters.

func padRight(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-sw)
}

func padLeft(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	return strings.Repeat(" ", w-sw) + s
}

// fit cuts a line to the screen width.
func fit(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// shortType drops the vendor word of a GPU type: "NVIDIA A100-SXM4-80GB" -> "A100-SXM4-80GB".
func shortType(t string) string {
	t = strings.TrimSpace(t)
	if i := strings.IndexByte(t, ' '); i > 0 && strings.EqualFold(t[:i], "nvidia") {
		return t[i+1:]
	}
	return t
}

// shortResource drops "limits." and the vendor domain: limits.nvidia.com/gpumem -> gpumem.
func shortResource(r string) string {
	r = strings.TrimPrefix(r, "limits.")
	if i := strings.LastIndexByte(r, '/'); i >= 0 {
		return r[i+1:]
	}
	return r
}
