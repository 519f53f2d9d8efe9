package tui

import (
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// At 80 columns the STATE column has a few cells: rather than cut a state ("unhea…", "cordo…"), its words
// are shortened from a fixed table, and the views that shorten them show a legend line under the table
// with the short forms on screen. A state that fits keeps its words.

// stateAbbrevs are the short forms, longest first so that a phrase is replaced before its words.
var stateAbbrevs = []struct{ long, short string }{
	{"devices not ready", "dnr"},
	{"SchedulingDisabled", "SD"},
	{"NotReady", "NR"},
	{"unregistered", "unreg"},
	{"unhealthy", "unh"},
	{"cordoned", "cdn"},
	{"taint", "tnt"},
	{" used", "u"}, // "MIG 2 used" → "MIG 2u"
}

// legend collects the short forms used in one frame (long form by short).
type legend map[string]string

// text is the legend line: "unh unhealthy · cdn cordoned", in a fixed order.
func (l legend) text() string {
	shorts := make([]string, 0, len(l))
	for s := range l {
		shorts = append(shorts, s)
	}
	sort.Strings(shorts)
	parts := make([]string, len(shorts))
	for i, s := range shorts {
		long := l[s]
		if s == "u" {
			s, long = "MIG Nu", "N MIG instances used"
		}
		parts[i] = s + " " + long
	}
	return strings.Join(parts, " · ")
}

// statePart is one word group of a state with its style ("n0", "unhealthy", "MIG 2 used").
type statePart struct {
	text  string
	style lipgloss.Style
	ok    bool   // the "ok" word: left out first when the state does not fit
	used  legend // the short words in text
}

// fitState joins a state's parts in width cells: as they are when they fit, else with short words (noted in
// leg), else without "ok", else the parts that fit followed by "…" (never a word cut in two).
func fitState(parts []statePart, width int, leg legend) string {
	return fitParts(parts, " ", width, leg)
}

// fitParts is fitState with the parts joined by sep; with short words that still do not fit, ", " becomes ","
// and the spaces within a part go ("1 unh, 1 cdn" → "1unh,1cdn").
func fitParts(parts []statePart, sep string, width int, leg legend) string {
	join := func(ps []statePart) (plain string, styled string) {
		var p, s []string
		for _, x := range ps {
			p = append(p, x.text)
			s = append(s, x.style.Render(x.text))
		}
		return strings.Join(p, sep), strings.Join(s, sep)
	}
	if plain, styled := join(parts); width <= 0 || ansi.StringWidth(plain) <= width {
		return styled
	}
	short := make([]statePart, 0, len(parts))
	for _, p := range parts {
		p.used = legend{}
		p.text = shorten(p.text, p.used)
		short = append(short, p)
	}
	if plain, _ := join(short); ansi.StringWidth(plain) > width && sep == ", " {
		sep = ","
		for i := range short {
			short[i].text = strings.ReplaceAll(short[i].text, " ", "")
		}
	}
	if plain, _ := join(short); ansi.StringWidth(plain) > width {
		kept := short[:0:0]
		for _, p := range short {
			if !p.ok {
				kept = append(kept, p)
			}
		}
		short = kept
	}
	for len(short) > 1 {
		if plain, _ := join(short); ansi.StringWidth(plain) <= width {
			break
		}
		short = short[:len(short)-1]
		short[len(short)-1].text += "…"
	}
	for _, p := range short {
		for s, l := range p.used {
			leg[s] = l
		}
	}
	_, styled := join(short)
	return styled
}

// fitHealth is a node's health text in width cells (fitState on its comma-separated notes).
func fitHealth(health string, style lipgloss.Style, width int, leg legend) string {
	if strings.HasPrefix(health, "unregistered (HAMi ") && ansi.StringWidth(health) > width {
		// "unregistered (HAMi v2.10 cannot read it)": the version is the point.
		health = "unreadable by HAMi " + strings.TrimSuffix(strings.TrimPrefix(health, "unregistered (HAMi "), " cannot read it)")
	}
	var parts []statePart
	for _, p := range strings.Split(health, ", ") {
		parts = append(parts, statePart{text: p, style: style})
	}
	return fitParts(parts, ", ", width, leg)
}

// shorten replaces the long words of a state by their short forms, noting each in used.
func shorten(text string, used legend) string {
	for _, a := range stateAbbrevs {
		if strings.Contains(text, a.long) {
			text = strings.ReplaceAll(text, a.long, a.short)
			used[a.short] = a.long
		}
	}
	return text
}
