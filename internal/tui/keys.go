package tui

import "charm.land/bubbles/v2/key"

// keyMap is the UI's global keymap, k9s-style; a view's own keys are in its viewInfo. Views (the number
// keys) is set from the registry (views.go).
type keyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom  key.Binding
	Enter, Back, Filter, Command, Help, Quit key.Binding
	Problems                                 key.Binding
	NextView, PrevView, Views                key.Binding
	Sort, Reverse                            key.Binding
	AllNamespaces, YAML, Describe            key.Binding
	// Form keys of the what-if view.
	NextField, PrevField, Edit key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Up:            key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:          key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:        key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown:      key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down")),
		Top:           key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:        key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Enter:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:          key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Filter:        key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Command:       key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "jump")),
		Help:          key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:          key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Problems:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "input problems")),
		NextView:      key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next view")),
		PrevView:      key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous view")),
		Sort:          key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort column")),
		Reverse:       key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse sort")),
		AllNamespaces: key.NewBinding(key.WithKeys("0"), key.WithHelp("0", "all namespaces")),
		YAML:          key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "YAML")),
		Describe:      key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "describe")),
		NextField:     key.NewBinding(key.WithKeys("down", "tab"), key.WithHelp("↓/tab", "next field")),
		PrevField:     key.NewBinding(key.WithKeys("up", "shift+tab"), key.WithHelp("↑/shift+tab", "previous field")),
		Edit:          key.NewBinding(key.WithKeys("enter", "e", "i"), key.WithHelp("enter/e", "edit the form")),
	}
}

// ShortHelp is the footer line.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Enter, k.Back, k.Filter, k.Command, k.NextView, k.Sort, k.Help, k.Quit}
}

// FullHelp is the ? screen, in columns; viewKeys are the views' own keys (views.go: viewInfo.keys).
func (k keyMap) FullHelp(viewKeys []key.Binding) [][]key.Binding {
	third := append(append([]key.Binding{k.Filter, k.Sort, k.Reverse, k.YAML, k.Describe, k.AllNamespaces}, viewKeys...), k.Problems, k.Help, k.Quit)
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Enter, k.Back, k.NextView, k.PrevView, k.Views, k.Command},
		third,
	}
}
