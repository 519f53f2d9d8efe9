package tui

import (
	"strings"
	"testing"
)

// TestWhatIfNameWarnings: the what-if form names a misspelled card, queue or namespace with the one meant above
// the answer, and says nothing for names the cluster has.
func TestWhatIfNameWarnings(t *testing.T) {
	cases := []struct {
		name       string
		card, queu string
		want       []string
	}{
		{"misspelled card and queue", "nvidia-h100-80gb-hbm3", "serveing", []string{
			`⚠ queue "serveing" is not in the cluster; did you mean "serving"?`,
			`⚠ card "nvidia-h100-80gb-hbm3" is not in the cluster; did you mean "NVIDIA-H100-80GB-HBM3"?`}},
		{"known names", "NVIDIA-H100-80GB-HBM3", "serving", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newDemo(t, 160, 48)
			press(m, "5", "enter", "tab", "tab", "tab", "tab", tc.card, "tab", tc.queu)
			got := screen(m)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the answer lacks %q:\n%s", w, got)
				}
			}
			if tc.want == nil && strings.Contains(got, "⚠ card") || tc.want == nil && strings.Contains(got, "⚠ queue") {
				t.Errorf("a warning for known names:\n%s", got)
			}
		})
	}
}
