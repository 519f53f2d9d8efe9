package cli

import (
	"strings"
	"testing"
)

// TestNamesResolved: a mistyped pod name gets the closest names; a misspelled --card is refused with the
// card meant, never advice built on the misspelling.
func TestNamesResolved(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"why-pending", "--demo", "-n", "inference", "llm-sevre-2"}, "did you mean inference/llm-serve-2, "},
		{[]string{"why-pending", "--demo", "-n", "inference", "llm-serve-3"}, "did you mean inference/llm-serve-0, inference/llm-serve-1, inference/llm-serve-2?"},
		{[]string{"why-pending", "--demo", "-n", "inference", "reranker"}, "did you mean inference/reranker-0?"},
		{[]string{"what-if", "--demo", "--card", "nvidia-h100-80gb-hbm3", "--queue", "serving"}, `did you mean "NVIDIA-H100-80GB-HBM3"?`},
		{[]string{"what-if", "--demo", "--card", "NVIDIA-A100-SXM4-80GB|NVIDIA-H100-80GB-HMB3", "--queue", "serving"}, `no node has card "NVIDIA-H100-80GB-HMB3"`},
	} {
		_, _, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to contain %q", c.args, err, c.want)
		}
	}
	// A correct card is not refused.
	if _, _, err := run(t, "what-if", "--demo", "--card", "NVIDIA-H100-80GB-HBM3", "--queue", "serving"); err != nil {
		t.Errorf("a known card was refused: %v", err)
	}
}
