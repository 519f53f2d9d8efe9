package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
)

// `:ctx`, k9s' context switch: `:ctx` names the kubeconfig's contexts, `:ctx NAME` leaves the UI with a
// SwitchContext error, on which `kubectl hami top` starts it again on that context (a new client, new
// informers: nothing of the old connection is kept).

// SwitchContext is what Run returns when the user asked for another kubeconfig context.
type SwitchContext struct{ Context string }

func (e *SwitchContext) Error() string { return "switch to kubeconfig context " + e.Context }

// ctxCommand is `:ctx [NAME]`.
func (m *Model) ctxCommand(args []string) tea.Cmd {
	ctxs := m.opts.Contexts
	if len(ctxs) == 0 {
		m.status = "no kubeconfig contexts: the UI shows a file or the demo"
		return nil
	}
	if len(args) == 0 {
		m.status = fmt.Sprintf("context %s · :ctx NAME switches (%s)", m.opts.Context, strings.Join(ctxs, ", "))
		return nil
	}
	r := resolve.Resolve(args[0], ctxs)
	if !r.Found() {
		msg := fmt.Sprintf("context %q is not in the kubeconfig", args[0])
		if s := resolve.DidYouMean(resolve.Closest(args[0], ctxs, resolve.DefaultSuggestions)); s != "" {
			msg += "; " + s
		}
		m.status = msg
		return nil
	}
	if r.Name == m.opts.Context {
		m.status = "already on context " + r.Name
		return nil
	}
	m.nextContext = r.Name
	return tea.Quit
}
