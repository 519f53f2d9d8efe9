// Package resolve finds the object a user meant by a name they typed: pods, nodes, namespaces, card names
// and queues all go through it, in the CLI's not-found errors and in the UI's `:` prompt. An exact name wins;
// then a name equal but for case, then a unique prefix; otherwise the closest names are suggested, ranked by
// typing distance (a swapped or wrong letter: llm-sevre-2 → llm-serve-2) and by fuzzy subsequence match
// (sahilm/fuzzy: reranker → reranker-0).
package resolve

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sahilm/fuzzy"
)

// DefaultSuggestions is how many close names a miss offers.
const DefaultSuggestions = 3

// Result is what a typed name resolves to: Name when one candidate is meant, else the closest ones.
type Result struct {
	Name        string
	Suggestions []string
}

// Found says whether the name resolved to one candidate.
func (r Result) Found() bool { return r.Name != "" }

// Resolve finds the candidate meant by name: exact, case-insensitive, or the only one it is a prefix of.
func Resolve(name string, candidates []string) Result {
	if name == "" {
		return Result{}
	}
	var folded, prefixed []string
	lower := strings.ToLower(name)
	for _, c := range candidates {
		if c == name {
			return Result{Name: c}
		}
		if strings.ToLower(c) == lower {
			folded = append(folded, c)
		}
		if strings.HasPrefix(strings.ToLower(c), lower) {
			prefixed = append(prefixed, c)
		}
	}
	if len(folded) == 1 {
		return Result{Name: folded[0]}
	}
	if len(prefixed) == 1 {
		return Result{Name: prefixed[0]}
	}
	return Result{Suggestions: Closest(name, candidates, DefaultSuggestions)}
}

// Closest lists at most n candidates nearest to name, nearest first; none when nothing is close.
func Closest(name string, candidates []string, n int) []string {
	if name == "" || n <= 0 {
		return nil
	}
	type scored struct {
		name  string
		dist  int // typing distance, or a large number for a fuzzy-only match
		fuzzy int // sahilm score, higher is better
	}
	lower := strings.ToLower(name)
	best := map[string]*scored{}
	limit := max(2, len([]rune(name))/4) // a typo or two, more for long names
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := Distance(lower, lc)
		if strings.HasPrefix(lc, lower) || strings.HasPrefix(lower, lc) {
			d = min(d, 1) // a prefix of what exists is as good as one typo
		}
		if d <= limit {
			best[c] = &scored{name: c, dist: d}
		}
	}
	for _, m := range fuzzy.Find(name, candidates) {
		if s := best[m.Str]; s != nil {
			s.fuzzy = m.Score
		} else {
			best[m.Str] = &scored{name: m.Str, dist: 1 << 20, fuzzy: m.Score}
		}
	}
	list := make([]*scored, 0, len(best))
	for _, s := range best {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.dist != b.dist {
			return a.dist < b.dist
		}
		if a.fuzzy != b.fuzzy {
			return a.fuzzy > b.fuzzy
		}
		return a.name < b.name
	})
	var out []string
	for _, s := range list {
		if len(out) == n {
			break
		}
		out = append(out, s.name)
	}
	return out
}

// Complete lists the candidates a partly typed name can become, those starting with it first (sorted),
// then fuzzy matches; at most n.
func Complete(typed string, candidates []string, n int) []string {
	var out []string
	seen := map[string]bool{}
	lower := strings.ToLower(typed)
	var prefixed []string
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), lower) {
			prefixed = append(prefixed, c)
		}
	}
	sort.Strings(prefixed)
	for _, c := range prefixed {
		if len(out) < n && !seen[c] {
			out, seen[c] = append(out, c), true
		}
	}
	if typed != "" {
		for _, m := range fuzzy.Find(typed, candidates) {
			if len(out) < n && !seen[m.Str] {
				out, seen[m.Str] = append(out, m.Str), true
			}
		}
	}
	return out
}

// DidYouMean is `did you mean "a", "b" or "c"?`, or "" for no suggestions.
func DidYouMean(suggestions []string) string {
	if len(suggestions) == 0 {
		return ""
	}
	q := make([]string, len(suggestions))
	for i, s := range suggestions {
		q[i] = fmt.Sprintf("%q", s)
	}
	if len(q) == 1 {
		return "did you mean " + q[0] + "?"
	}
	return "did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + "?"
}

// Distance is the optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring letters each cost one.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
