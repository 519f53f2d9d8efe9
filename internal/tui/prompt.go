package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
)

// The `:` prompt completes as it is typed: the footer lists what the word under the cursor can become
// (views, then node names after "node", namespaces after "quotas", queues after "queues"), tab takes the
// first; a name that matches nothing says "did you mean …?" (internal/resolve, as the CLI).

// promptWords are the words `:` offers first: each tab's first word, then the global commands.
func (m *Model) promptWords() []string {
	var out []string
	for _, t := range m.tabInfos() {
		out = append(out, t.commands[0])
	}
	return append(out, "ns", "ctx", "problems", "help", "quit")
}

// globalWords are the `:` words the Model runs itself, by the word they are offered as.
var globalWords = map[string][]string{
	"quit": {"q", "q!", "quit", "exit"}, "help": {"help", "?"}, "problems": {"problems", "problem", "prob"},
	"ns": {"ns", "namespace"}, "ctx": {"ctx", "context"},
}

// opens is the offered word of what enter runs for word (runCommand's order: the global commands, then a
// view by one of its words or a unique prefix); "" when enter would say "unknown view".
func (m *Model) opens(word string) string {
	for offered, words := range globalWords {
		if slices.Contains(words, word) {
			return offered
		}
	}
	if match := m.matchViews(word); len(match) == 1 {
		return m.views[match[0]].info().commands[0]
	}
	return ""
}

// promptCandidates is what the last word of the prompt line can become, and that word.
func (m *Model) promptCandidates(line string) (word string, cands []string) {
	fields := strings.Fields(line)
	trailing := strings.HasSuffix(line, " ")
	if len(fields) == 0 || (len(fields) == 1 && !trailing) {
		if len(fields) == 1 {
			word = fields[0]
		}
		cands = resolve.Complete(word, m.promptWords(), 6)
		// The hint's first word is what enter opens (":po" opens Pods: "pods" comes before "problems").
		if o := m.opens(strings.ToLower(word)); o != "" {
			cands = append([]string{o}, slices.DeleteFunc(cands, func(c string) bool { return c == o })...)
		}
		return word, cands
	}
	if !trailing {
		word = fields[len(fields)-1]
	}
	return word, resolve.Complete(word, m.namesFor(fields[0]), 6)
}

// namesFor is the names a view's command takes: nodes, namespaces or queues.
func (m *Model) namesFor(cmd string) []string {
	switch m.opens(strings.ToLower(cmd)) {
	case "ns":
		return m.namespaceNames()
	case "ctx":
		return m.opts.Contexts
	}
	if i := m.lookupView(strings.ToLower(cmd)); i >= 0 {
		return m.views[i].names(m.shared())
	}
	return nil
}

// completePrompt replaces the word being typed with its first completion.
func (m *Model) completePrompt() {
	line := m.input.Value()
	word, cands := m.promptCandidates(line)
	if len(cands) == 0 {
		return
	}
	m.input.SetValue(strings.TrimSuffix(line, word) + cands[0] + " ")
	m.input.CursorEnd()
}

// promptHint is the footer's list of completions for the prompt line.
func (m *Model) promptHint() string {
	_, cands := m.promptCandidates(m.input.Value())
	if len(cands) == 0 {
		return ""
	}
	return "  tab: " + strings.Join(cands, " · ")
}

// nodeNotFound says a node name matched nothing, with the closest ones.
func (c *common) nodeNotFound(name string) string {
	msg := fmt.Sprintf("node %q not found", name)
	if s := resolve.DidYouMean(resolve.Closest(name, nodeNames(c), resolve.DefaultSuggestions)); s != "" {
		msg += "; " + s
	}
	return msg
}
