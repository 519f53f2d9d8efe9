package resolve

import (
	"slices"
	"testing"
)

var pods = []string{"llm-serve-0", "llm-serve-1", "llm-serve-2", "embedder-0", "reranker-0", "numa-allreduce", "batch-render"}

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		in, name string
		sugg     []string
	}{
		{"llm-serve-2", "llm-serve-2", nil},
		{"LLM-Serve-2", "llm-serve-2", nil},
		{"reranker", "reranker-0", nil},                                            // the only name it begins
		{"batch", "batch-render", nil},                                             // unique prefix
		{"llm-sevre-2", "", []string{"llm-serve-2", "llm-serve-0", "llm-serve-1"}}, // a swap, then two more letters off
		{"llm-serve-3", "", []string{"llm-serve-0", "llm-serve-1", "llm-serve-2"}},
		{"llm-serve", "", []string{"llm-serve-0", "llm-serve-1", "llm-serve-2"}}, // a prefix of three: ambiguous
		{"zzzz", "", nil},
		{"", "", nil},
	} {
		r := Resolve(c.in, pods)
		if r.Name != c.name || !slices.Equal(r.Suggestions, c.sugg) {
			t.Errorf("Resolve(%q) = %q %q, want %q %q", c.in, r.Name, r.Suggestions, c.name, c.sugg)
		}
		if r.Found() != (c.name != "") {
			t.Errorf("Resolve(%q).Found() = %v", c.in, r.Found())
		}
	}
}

func TestClosestCards(t *testing.T) {
	cards := []string{"NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "Tesla-T4"}
	if got := Closest("nvidia-h100-80gb-hbm3", cards, 3); len(got) == 0 || got[0] != "NVIDIA-H100-80GB-HBM3" {
		t.Errorf("case-folded card: %q", got)
	}
	if got := Closest("NVIDIA-H100-80GB-HMB3", cards, 1); !slices.Equal(got, []string{"NVIDIA-H100-80GB-HBM3"}) {
		t.Errorf("swapped letters: %q", got)
	}
}

func TestComplete(t *testing.T) {
	nodes := []string{"gpu-t4-02", "gpu-a100-01", "gpu-a100-02", "cpu-01", "gpu-t4-03"}
	if got := Complete("gpu-a", nodes, 5); !slices.Equal(got, []string{"gpu-a100-01", "gpu-a100-02"}) {
		t.Errorf("Complete(gpu-a) = %q", got)
	}
	if got := Complete("t43", nodes, 5); !slices.Equal(got, []string{"gpu-t4-03"}) {
		t.Errorf("Complete(t43) fuzzy = %q", got)
	}
	if got := Complete("", nodes, 2); !slices.Equal(got, []string{"cpu-01", "gpu-a100-01"}) {
		t.Errorf("Complete(\"\") = %q", got)
	}
}

func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, `did you mean "a"?`},
		{[]string{"a", "b", "c"}, `did you mean "a", "b" or "c"?`},
	} {
		if got := DidYouMean(c.in); got != c.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"kitten", "sitting", 3}, {"", "abc", 3}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
