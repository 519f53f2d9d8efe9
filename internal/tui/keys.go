package tui

import "charm.land/bubbles/v2/key"

// keyMap is the one keymap of the UI, k9s-style.
type keyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom  key.Binding
	Enter, Back, Filter, Command, Help, Quit key.Binding
	Problems                                 key.Binding
	NextView, PrevView, Views                key.Binding
	Sort, Reverse, Compact                   key.Binding
	// Form keys of the what-if view.
	NextField, PrevField, Edit key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:    key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown:  key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down")),
		Top:       key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:    key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Enter:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Command:   key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "jump")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Problems:  key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "input problems")),
		NextView:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next view")),
		PrevView:  key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous view")),
		Views:     key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6"), key.WithHelp("1-6", "view")),
		Sort:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort column")),
		Reverse:   key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse sort")),
		Compact:   key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "compact/full")),
		NextField: key.NewBinding(key.WithKeys("down", "tab"), key.WithHelp("↓/tab", "next field")),
		PrevField: key.NewBinding(key.WithKeys("up", "shift+tab"), key.WithHelp("↑/shift+tab", "previous field")),
		Edit:      key.NewBinding(key.WithKeys("enter", "e", "i"), key.WithHelp("enter/e", "edit the form")),
	}
}

// ShortHelp is the footer line.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Enter, k.Back, k.Filter, k.Command, k.NextView, k.Sort, k.Help, k.Quit}
}

// FullHelp is the ? screen, in columns.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Enter, k.Back, k.NextView, k.PrevView, k.Views, k.Command},
		{k.Filter, k.Sort, k.Reverse, k.Compact, k.Problems, k.Help, k.Quit},
	}
}
