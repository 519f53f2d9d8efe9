package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// whatIfView is the What-if tab: a form for a hypothetical pod and the engine's answer, recomputed as it is
// typed (the form, its keys and the answer are in whatif.go).
type whatIfView struct {
	page
	form whatIfForm
}

func newWhatIfView(o Options) view { return &whatIfView{form: newWhatIfForm(o.Namespace)} }

func (v *whatIfView) info() viewInfo {
	return viewInfo{name: "What-if", commands: []string{"what-if", "whatif", "wi", "w"},
		help: [][2]string{{"Form", "what-if: enter edits, ↑↓/tab move, esc leaves; the answer follows every key; card A|B, queue"}}}
}

// refresh answers for the form's values (computed on first show, not at start). The form is not focused on
// arrival, so that tab and the number keys keep moving between views; enter (or e) edits it.
func (v *whatIfView) refresh(c *common) tea.Cmd { return v.ask(c) }

func (v *whatIfView) editing() bool { return v.form.editing }

func (v *whatIfView) drill(*common) tea.Cmd { return v.form.focus() }

func (v *whatIfView) update(c *common, msg tea.Msg) tea.Cmd {
	f := &v.form
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case f.editing:
			return v.formKey(c, msg)
		case key.Matches(msg, c.keys.Edit):
			return f.focus()
		case key.Matches(msg, c.keys.Up, c.keys.Down, c.keys.PageUp, c.keys.PageDown):
			var cmd tea.Cmd
			f.answer, cmd = f.answer.Update(msg)
			return cmd
		}
	case whatIfMsg:
		return v.show(c, msg)
	case restyleMsg:
		for i := range f.fields {
			f.fields[i].input.SetStyles(c.styles.input)
		}
		f.last = "" // the answer is styled: redo it
	default:
		if f.editing && c.focused(v) && !c.typing {
			return f.update(msg) // the cursor's blink
		}
	}
	return nil
}

func (v *whatIfView) wheel(_ *common, dir int) {
	if dir < 0 {
		v.form.answer.ScrollUp(wheelStep)
	} else {
		v.form.answer.ScrollDown(wheelStep)
	}
}

func (v *whatIfView) layout(c *common) {
	f := &v.form
	if f.answer.Width() != c.width {
		f.answer.SetWidth(c.width)
		f.answer.SetContent(wrapProse(f.text, c.width))
	}
	f.answer.SetHeight(max(c.bodyHeight()-len(f.fields)-1, 1))
}

// render is the form and the answer (the Model clips them to the body).
func (v *whatIfView) render(c *common, _ int) []string { return v.renderForm(c) }
