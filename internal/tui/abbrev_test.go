package tui

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// TestFitState: a state that fits keeps its words; one that does not gets the short words (in the legend),
// then loses "ok", then ends in "…" after whole parts; a word is never cut.
func TestFitState(t *testing.T) {
	p := func(text string, ok bool) statePart { return statePart{text: text, style: lipgloss.NewStyle(), ok: ok} }
	for _, tc := range []struct {
		parts  []statePart
		width  int
		want   string
		legend string
	}{
		{[]statePart{p("n0", false), p("unhealthy", false)}, 20, "n0 unhealthy", ""},
		{[]statePart{p("n0", false), p("unhealthy", false)}, 9, "n0 unh", "unh unhealthy"},
		{[]statePart{p("n1", false), p("cordoned", false)}, 9, "n1 cdn", "cdn cordoned"},
		{[]statePart{p("n0", false), p("ok", true), p("MIG 2 used", false)}, 9, "n0 MIG 2u", "MIG Nu N MIG instances used"},
		{[]statePart{p("n0", false), p("unhealthy", false), p("cordoned", false), p("MIG 2 used", false)}, 9, "n0 unh…", "unh unhealthy"},
	} {
		leg := legend{}
		got := fitState(tc.parts, tc.width, leg)
		if got != tc.want || leg.text() != tc.legend {
			t.Errorf("fitState(%v, %d) = %q, legend %q; want %q, legend %q", tc.parts, tc.width, got, leg.text(), tc.want, tc.legend)
		}
		if len([]rune(got)) > tc.width {
			t.Errorf("fitState(%v, %d) = %q is wider than %d", tc.parts, tc.width, got, tc.width)
		}
	}
	leg := legend{}
	if got := fitHealth("1 unhealthy, 1 cordoned", lipgloss.NewStyle(), 9, leg); got != "1unh,1cdn" {
		t.Errorf("fitHealth of two notes in 9 cells = %q", got)
	}
	if got := fitHealth("1 unhealthy, 1 cordoned", lipgloss.NewStyle(), 40, legend{}); got != "1 unhealthy, 1 cordoned" {
		t.Errorf("fitHealth with room changed the health: %q", got)
	}
	if got := fitHealth("unregistered (HAMi v2.10 cannot read it)", lipgloss.NewStyle(), 26, legend{}); got != "unreadable by HAMi v2.10" {
		t.Errorf("fitHealth of an unreadable registration = %q", got)
	}
}

// TestWrapWordsKeepsNames: prose wraps at spaces only, so node and pod names stay whole.
func TestWrapWordsKeepsNames(t *testing.T) {
	got := wrapWords("NodeUnregistered (2 node(s)): no GPUs registered in hami.io/node-nvidia-register on cpu-01, gpu-t4-03", 78)
	for _, l := range got {
		if len([]rune(l)) > 78 {
			t.Errorf("line %q is wider than 78", l)
		}
		if strings.HasSuffix(l, "-") {
			t.Errorf("a name was split after %q", l)
		}
	}
	if !strings.Contains(strings.Join(got, "\n"), "gpu-t4-03") {
		t.Errorf("gpu-t4-03 is not whole in %q", got)
	}
	if got := wrapWords(strings.Repeat("x", 30), 10); len(got) != 3 {
		t.Errorf("a word longer than the width is cut into %d lines, want 3: %q", len(got), got)
	}
}
