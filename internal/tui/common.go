package tui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
)

// common is the narrow context every view gets, in the style of soft-serve's common.Common: what a view may
// read (the data shown, the data layer's queries, live usage, the styles, the keys, the size and the clock)
// and one way to act outside itself, send. A view never sees the Model or another view: it opens a view, or
// tells one something, by a message (k9s' view stack: push a view by a message, esc pops it), and the Model
// routes the messages once the view returns (Model.flush). internal/tui's architecture test holds the views
// to this.
type common struct {
	data     *Data
	verdicts map[string]*engine.Verdict
	metrics  *MetricsMsg
	// history is each GPU's recent utilisation readings (history.go).
	utilHist utilHistory
	// world is the data layer's questions (queries.go), answered as the commands answer them.
	world queries
	// events reads one pod's events (live only; nil for a snapshot).
	events func(ctx context.Context, ns, name string) ([]*corev1.Event, error)

	// namespace is the one namespace shown (`:ns NAME`, top -n), "" for all.
	namespace string

	styles        styles
	keys          keyMap
	width, height int
	now           func() time.Time

	// shown is the name of the view on screen; typing is true while the filter or command line takes the keys;
	// tableRows is the lines the shown view's table rows get. The Model sets them before it calls a view.
	shown     string
	typing    bool
	tableRows int
	// tabKeys are the tabs' number keys by name ("Nodes": "1").
	tabKeys map[string]string

	outbox []tea.Msg // sent by the views, routed by the Model after each call
}

// queries are the data layer's questions a view may ask (world, queries.go).
type queries interface {
	explain(ns, name string, events []*corev1.Event) (query.Explanation, bool)
	whatIf(pod *corev1.Pod) whatIfAnswer
	config() engine.Config
	object(kind, key string) ([]runtime.Object, bool)
}

// send queues a message for the Model to route once the view returns: showMsg and statusMsg to the Model,
// anything else to every view.
func (c *common) send(msg tea.Msg) { c.outbox = append(c.outbox, msg) }

// focused is whether v is the view on screen.
func (c *common) focused(v view) bool { return v.info().name == c.shown }

// tabKey is the number key of the tab named name ("1" for Nodes); "" when it has none.
func (c *common) tabKey(name string) string { return c.tabKeys[name] }

// bodyHeight is the number of lines between the header and the footer.
func (c *common) bodyHeight() int { return max(c.height-headerLines-footerLines, 1) }

// scrollKey is how far a scrolling key moves a page (up, down, page up, page down), 0 for any other key.
func (c *common) scrollKey(msg tea.KeyPressMsg) int {
	switch {
	case key.Matches(msg, c.keys.Up):
		return -1
	case key.Matches(msg, c.keys.Down):
		return 1
	case key.Matches(msg, c.keys.PageUp):
		return -c.bodyHeight()
	case key.Matches(msg, c.keys.PageDown):
		return c.bodyHeight()
	}
	return 0
}

// The messages views send (c.send).
type (
	// showMsg asks the Model to show the view named view (pushed on the history esc walks back); filter, when
	// set, replaces its table's filter.
	showMsg struct {
		view   string
		filter *string
	}
	// statusMsg is a line for the footer (a name that matched nothing).
	statusMsg string
	// nodeSelectedMsg says the node selected in the Nodes view (or named by `:node`) changed: the Node view
	// follows it; clear clears the Nodes view's filter and selects the node there too.
	nodeSelectedMsg struct {
		node  string
		clear bool
	}
	// openNodeMsg opens a node in the Node view from its top, unfiltered.
	openNodeMsg struct{ node string }
	// openGPUMsg opens the GPU page of one GPU of a node.
	openGPUMsg struct{ node, uuid string }
	// openWhyMsg opens the why-pending page of a pod (namespace/name).
	openWhyMsg struct{ pod string }
	// openPodMsg opens the page of a GPU pod on a node (namespace/name).
	openPodMsg struct{ pod string }
)

// show is the message that shows a view, with an optional filter.
func show(view string) showMsg { return showMsg{view: view} }

func showFiltered(view, filter string) showMsg { return showMsg{view: view, filter: &filter} }
