package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// The views as components, in the style of k9s' view registrar and soft-serve's common.Component: every
// page of the UI is a view, one type in its own file, and the registry below lists them in display order.
// The Model only wires them: it owns the header, the footer, the history that esc walks back, the overlays,
// the `:` prompt and the window size, and dispatches keys, messages, mouse wheel and drawing to the focused
// view. The tabs, the number keys, the `:` words and their completions, the help screen and `kubectl hami
// top --help` are all derived from the registry. Adding a view is one file (a type implementing view, usually
// by embedding tableView or page) plus one line in registry.

// registry is every view in display order. The tabs (views without a parent) get the number keys 1, 2, …
// in this order; the pages after them are opened by a drill from their parent's tab.
var registry = []func(Options) view{
	newNodesView,
	newNodeView,
	newQuotasView,
	newPendingView,
	newWhatIfView,
	newQueuesView,
	newPodsView,
	newVerdictPage,
	newGPUPage,
	newPodPage,
	newObjectPage,
}

// view is one page of the UI. Its methods run inside Model.Update (state changes only there) except render,
// which runs in Model.View and changes nothing but a clamped scroll offset. c is the narrow shared context
// (common.go): the data, verdicts and live usage shown, the data layer's queries, the styles, the size, the
// keys and the clock. A view changes only its own state; to open another view, or to tell it something, it
// sends a message (c.send).
type view interface {
	// info is what the registry needs to know: name, `:` words, help.
	info() viewInfo
	// setData rebuilds the view's rows from m.data (and m.verdicts); it runs on every new data.
	setData(c *common)
	// focus runs when the view comes on screen: by a tab, a number key, a click, a drill or `:` (back false),
	// or by esc from a later view (back true).
	focus(c *common, back bool)
	// refresh is the work to start when the view is shown (tab, number key, click, `:`) and, while it is
	// shown, when the data or the styles change: the what-if form's answer.
	refresh(c *common) tea.Cmd
	// update handles a key when the view is focused and no global key took it (every key while editing), a
	// click on a row of its table (selectMsg), and, focused or not, every message the Model does not handle
	// itself (a view's own asynchronous answers come back this way) and restyleMsg.
	update(c *common, msg tea.Msg) tea.Cmd
	// wheel is one notch of the mouse wheel over the view (dir -1 up, 1 down).
	wheel(c *common, dir int)
	// layout sizes the view's components to the window; it runs after every Update.
	layout(c *common)
	// render draws the body: at most height lines, each at most c.width wide (the Model clips both).
	render(c *common, height int) []string
	// drill is enter (or a second click) on the selected row: what it opens.
	drill(c *common) tea.Cmd
	// jump prepares the view for `:word ARGS` (a filter, a node name); false, with a statusMsg sent, when it
	// cannot be shown.
	jump(c *common, args []string) bool
	// names are what `:word ` completes to after one of the view's words (node names, namespaces).
	names(c *common) []string
	// rows is the view's table (filter, sort, cursor keys, clicks, the count in the tab bar); nil for a page.
	rows() *table
	// editing is true while the view takes every key before the global ones (the what-if form being edited).
	editing() bool
}

// viewInfo describes a view to the registry.
type viewInfo struct {
	// name is the tab's label ("Nodes"), or the page's name.
	name string
	// parent is the tab a page belongs to ("Pending" for the why-pending page); "" makes the view a tab.
	parent string
	// commands are the words `:` takes for a tab, the first one offered in completions and shown in help.
	commands []string
	// usage follows the first command in help's Jump line ("NAME", "[FILTER]"); one not in brackets is
	// also shown in the prompt's placeholder.
	usage string
	// about follows the name in help's Views line (": card quota").
	about string
	// drill is help's Drill entry: enter on drill[0] opens drill[1] ("a node", "its GPUs").
	drill [2]string
	// help are paragraphs of the help screen (label, text), after the Mouse paragraph.
	help [][2]string
	// keys are the view's own keys, in the third column of the help screen.
	keys []key.Binding
	// headLines are the lines the view draws above its table's rows (1: the column headings).
	headLines int
	// footLines are the lines the view draws under its table's rows (the legend of short states).
	footLines int
	// verdicts: the rows show the pending pods' verdicts, so setData runs again when they come in.
	verdicts bool
	// wraps: the rows' heights depend on the width, so setData runs again when it changes.
	wraps bool
	// live: the rows sort by live usage, so setData runs again on every reading of the agents.
	live bool
}

// page is the base of a view without a table: every method but info, render, update and wheel, as a no-op.
// Embed it and override what the page needs.
type page struct{}

func (page) setData(*common)             {}
func (page) focus(*common, bool)         {}
func (page) refresh(*common) tea.Cmd     { return nil }
func (page) layout(*common)              {}
func (page) drill(*common) tea.Cmd       { return nil }
func (page) jump(*common, []string) bool { return true }
func (page) names(*common) []string      { return nil }
func (page) rows() *table                { return nil }
func (page) editing() bool               { return false }

// selectMsg is a click on a row of the focused table view: row is the row's position in the table's order.
type selectMsg struct{ row int }

// tableView is the base of a view over a table: the cursor keys, sort and the mouse wheel move in it, and
// `:word FILTER` filters it.
type tableView struct {
	page
	t *table
}

func (v *tableView) rows() *table { return v.t }

// update moves in the table (move).
func (v *tableView) update(c *common, msg tea.Msg) tea.Cmd { //nolint:unparam // view.update; moving in a table starts no work
	v.move(c, msg)
	return nil
}

// move moves in the table: the cursor keys, first and last, sort and reverse, a click.
func (v *tableView) move(c *common, msg tea.Msg) {
	if s, ok := msg.(selectMsg); ok {
		v.t.cursor = s.row
		return
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return
	}
	t, h := v.t, c.tableRows
	switch {
	case key.Matches(k, c.keys.Up):
		t.move(-1)
	case key.Matches(k, c.keys.Down):
		t.move(1)
	case key.Matches(k, c.keys.PageUp):
		t.move(-t.pageSize(h))
	case key.Matches(k, c.keys.PageDown):
		t.move(t.pageSize(h))
	case key.Matches(k, c.keys.Top):
		t.home()
	case key.Matches(k, c.keys.Bottom):
		t.end()
	case key.Matches(k, c.keys.Sort):
		t.cycleSort()
	case key.Matches(k, c.keys.Reverse):
		t.reverse()
	case len(k.Text) == 1 && k.Text[0] >= 'A' && k.Text[0] <= 'Z':
		t.sortByLetter(rune(k.Text[0])) // shift+letter: that column (k9s)
	}
}

func (v *tableView) wheel(_ *common, dir int) { v.t.move(dir) }

// jump filters the table by the words after the command (":pending inference").
func (v *tableView) jump(_ *common, args []string) bool {
	if len(args) > 0 {
		v.t.setFilter(strings.Join(args, " "))
	}
	return true
}

// viewOf is the registered view of type V (the zero V when none is). Only the Model and tests look views up:
// a view reaches another by a message (common.go), never by its fields.
func viewOf[V view](m *Model) V {
	for _, v := range m.views {
		if x, ok := v.(V); ok {
			return x
		}
	}
	var zero V
	return zero
}

// newViews builds one of each registered view.
func newViews(o Options) []view {
	out := make([]view, len(registry))
	for i, mk := range registry {
		out[i] = mk(o)
	}
	return out
}

// tabInfos are the tabs (views without a parent) of views, in the order of their number keys.
func tabInfos(views []view) []viewInfo {
	var out []viewInfo
	for _, v := range views {
		if i := v.info(); i.parent == "" {
			out = append(out, i)
		}
	}
	return out
}

// tabInfos are the model's tabs, in the order of their number keys.
func (m *Model) tabInfos() []viewInfo { return tabInfos(m.views) }

// tabKeys are the number keys of the tabs by name ("Nodes": "1"); a tenth tab has none.
func tabKeys(tabs []viewInfo) map[string]string {
	out := map[string]string{}
	for i, t := range tabs {
		if i < 9 {
			out[t.name] = fmt.Sprint(i + 1)
		}
	}
	return out
}

// ViewKeys is the number keys of the views, "1-6", for the command's help.
func ViewKeys() string { return viewsKey(tabInfos(newViews(Options{}))).Help().Key }

// viewsKey is the binding of the views' number keys: 1 to 9 (a tenth tab is reached by tab and `:`).
func viewsKey(tabs []viewInfo) key.Binding {
	keys := make([]string, min(len(tabs), 9))
	for i := range keys {
		keys[i] = fmt.Sprint(i + 1)
	}
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(fmt.Sprintf("1-%d", len(keys)), "view"))
}

// current is the focused view.
func (m *Model) current() view { return m.views[m.view] }

// indexOf is the registry position of the view named name, or -1.
func (m *Model) indexOf(name string) int {
	for i, v := range m.views {
		if v.info().name == name {
			return i
		}
	}
	return -1
}

// tabs are the registry positions of the tabs, in the order of their number keys.
func (m *Model) tabIndexes() []int {
	var out []int
	for i, v := range m.views {
		if v.info().parent == "" {
			out = append(out, i)
		}
	}
	return out
}

// tabOf is the tab number (0-based) a view is under: its own, or its parent's for a page.
func (m *Model) tabOf(i int) int {
	name := m.views[i].info().name
	if p := m.views[i].info().parent; p != "" {
		name = p
	}
	for n, t := range m.tabIndexes() {
		if m.views[t].info().name == name {
			return n
		}
	}
	return 0
}

// showTab shows the n-th tab (0-based, wrapping).
func (m *Model) showTab(n int) tea.Cmd {
	tabs := m.tabIndexes()
	m.switchTo(tabs[(n%len(tabs)+len(tabs))%len(tabs)])
	return m.enterView()
}

// commandWords are the tabs' first `:` words (with a required argument: "node NAME"), for the placeholder
// and the unknown-view message.
func commandWords(tabs []viewInfo) []string {
	var out []string
	for _, t := range tabs {
		w := t.commands[0]
		if t.usage != "" && !strings.HasPrefix(t.usage, "[") {
			w += " " + t.usage
		}
		out = append(out, w)
	}
	return out
}

// lookupView is the registry position of the view a command word names exactly, or -1.
func (m *Model) lookupView(word string) int {
	for i, v := range m.views {
		for _, n := range v.info().commands {
			if n == word {
				return i
			}
		}
	}
	return -1
}

// matchViews are the views a command word names: exactly, or as the unique prefix of their words.
func (m *Model) matchViews(word string) []int {
	if i := m.lookupView(word); i >= 0 {
		return []int{i}
	}
	var match []int
	for i, v := range m.views {
		for _, n := range v.info().commands {
			if strings.HasPrefix(n, word) {
				match = append(match, i)
				break
			}
		}
	}
	return match
}

// helpViews is help's Views line: "1 Nodes  2 Node … 6 Queues: card quota".
func helpViews(tabs []viewInfo) string {
	parts := make([]string, len(tabs))
	for i, t := range tabs {
		parts[i] = fmt.Sprintf("%d %s%s", i+1, t.name, t.about)
	}
	return strings.Join(parts, "  ")
}

// helpJump is help's Jump line: every tab's first word and its usage, then the global commands.
func helpJump(tabs []viewInfo) string {
	var parts []string
	for _, t := range tabs {
		w := ":" + t.commands[0]
		if t.usage != "" {
			w += " " + t.usage
		}
		parts = append(parts, w)
	}
	return strings.Join(append(parts, ":problems", ":ns NAME", ":ctx NAME", ":q (tab completes)"), "  ")
}

// helpDrill is help's Drill line from every view's drill entry; views whose enter opens the same thing are
// named together, where the last of them stands.
func helpDrill(views []viewInfo) string {
	type group struct{ on, opens string }
	var groups []group
	for _, v := range views {
		if v.drill[0] == "" {
			continue
		}
		g := group{v.drill[0], v.drill[1]}
		for i := range groups {
			if groups[i].opens == g.opens {
				g.on = groups[i].on + " or " + g.on
				groups = append(groups[:i], groups[i+1:]...)
				break
			}
		}
		groups = append(groups, g)
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = "on " + g.on + ": " + g.opens
	}
	return "enter " + strings.Join(parts, "; ")
}

// infos are the registered views' infos, in registry order.
func (m *Model) infos() []viewInfo {
	out := make([]viewInfo, len(m.views))
	for i, v := range m.views {
		out[i] = v.info()
	}
	return out
}

// form is the what-if view's form (tests read it).
func (m *Model) form() *whatIfForm { return &viewOf[*whatIfView](m).form }
