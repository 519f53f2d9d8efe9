package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/usage"
)

// Options start the UI.
type Options struct {
	// Snapshot is the first state shown: the demo, a file, or the cluster as just listed. Without it, Load is
	// required.
	Snapshot *snapshot.Snapshot
	// Load, when Snapshot is nil, lists the cluster while the UI already shows "connecting to Server…"; an
	// error is shown and the list is tried again (connect.go). Its Client and Dynamic replace those below.
	Load   func(context.Context) (Loaded, error)
	Server string
	// Client, when set, keeps the UI live: informers watch nodes, pods, resourcequotas and the device
	// ConfigMap. Without it the snapshot is static.
	Client kubernetes.Interface
	// Dynamic, with Client, also keeps Volcano's Queue and PodGroup objects live (dynamic informers), when
	// the snapshot found their CRDs (Snapshot.Volcano).
	Dynamic dynamic.Interface
	// DeviceConfigMap is namespace/name of HAMi's device ConfigMap.
	DeviceConfigMap string
	// HAMiVersion is the HAMi release the cluster runs (--hami-version); empty means the engine's default.
	HAMiVersion string
	// Context is the kubeconfig context, shown in the header.
	Context string
	// Namespace is the what-if form's default namespace.
	Namespace string
	// OnlyNamespace, when set (top -n NS), limits the Pending and Quotas views to that namespace; nodes, their
	// GPUs and queues stay whole: they are shared by every namespace.
	OnlyNamespace string
	// Now is the clock (tests fix it).
	Now func() time.Time
	// NoColor drops colours (NO_COLOR); attributes such as reverse video stay.
	NoColor bool
	// Input and Output default to the process's terminal.
	Input  io.Reader
	Output io.Writer
	// ProgramOptions are extra Bubble Tea options (tests: window size).
	ProgramOptions []tea.ProgramOption
	// Agents, with Client, has the UI read the node agents' live GPU usage (GET /usage through the API
	// server's pod proxy) every MetricsInterval (DefaultMetricsInterval when 0). Nil shows "n/a".
	Agents          *usage.Options
	MetricsInterval time.Duration
	// Simulate shows made-up live usage in the agents' format, marked "simulated" (the demo; simulate.go).
	Simulate bool
}

// Run shows the UI until the user quits or ctx ends.
func Run(ctx context.Context, o Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m, err := New(o)
	if err != nil {
		return err
	}
	m.ctx = ctx // agent readings stop when the UI does
	if o.Client != nil || o.Load != nil {
		// client-go logs through klog to stderr, which is the UI's terminal: its messages go to the header
		// (watch errors) or nowhere while the UI runs.
		klog.LogToStderr(false)
		klog.SetOutput(io.Discard)
		defer klog.LogToStderr(true)
	}
	if o.Client != nil {
		if err := watch(ctx, o.Client, o.DeviceConfigMap, m.queue, m.watchErr); err != nil {
			return err
		}
		if m.watchVolcano {
			if err := watchVolcano(ctx, o.Dynamic, m.queue, m.watchErr); err != nil {
				return err
			}
		}
	}
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if o.Input != nil {
		opts = append(opts, tea.WithInput(o.Input))
	}
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
	}
	opts = append(opts, o.ProgramOptions...)
	_, err = tea.NewProgram(m, opts...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

type viewID int

const (
	viewNodes viewID = iota
	viewNode
	viewQuotas
	viewPending
	viewWhatIf
	viewQueues
	viewVerdict // the why-pending page of one pod, opened from Pending
	viewGPU     // the pods on one GPU, opened from Node
)

// viewNames are the tabs, in the order of their number keys.
var viewNames = []string{"Nodes", "Node", "Quotas", "Pending", "What-if", "Queues"}

type inputMode int

const (
	modeNormal inputMode = iota
	modeFilter
	modeCommand
)

// Lines around the body: title, counts, notes, tabs above; the footer below.
const (
	headerLines = 4
	footerLines = 1
)

// Model is the Bubble Tea model of `kubectl hami top`. Its state changes only in Update.
type Model struct {
	opts   Options
	now    func() time.Time
	world  *world
	queue  *queue // live only
	events func(ctx context.Context, ns, name string) ([]*corev1.Event, error)

	watchErr     chan error
	liveErr      string
	watchVolcano bool // live, with a dynamic client, on a cluster that serves Volcano's CRDs

	data        *Data
	verdicts    map[string]*engine.Verdict
	verdictsGen uint64
	metrics     *MetricsMsg

	// The agents' poll (live with Options.Agents): one reading at a time, the next one interval after.
	fetchMetrics func(context.Context) MetricsMsg
	metricsEvery time.Duration
	ctx          context.Context // Run's; nil (background) for models driven by tests

	building, dirty       bool // a rebuild runs; another is due
	evaluating, evalDirty bool // pending verdicts are computed; again when done

	width, height int
	dark          bool
	styles        styles
	keys          keyMap
	help          help.Model

	view       viewID
	history    []viewID
	mode       inputMode
	overlay    overlayID // help or problems, over the view
	overlayOff int       // its scroll offset
	compact    bool
	status     string

	nodes, node, quotas, pending, queues *table
	detail                               string // the node shown in the Node view
	detailPods                           map[string][]podOnGPU
	gpuUUID                              string // the GPU shown in the GPU page
	gpuOff                               int    // its scroll offset
	input                                textinput.Model

	pager     viewport.Model
	pagerPod  string // namespace/name shown in the pager
	pagerText string // its text, unwrapped

	form whatIfForm

	connect *connectState // while the first list of the cluster is not in (Options.Load)
}

// New builds the model on the options' snapshot (the first frame needs no I/O).
func New(o Options) (*Model, error) {
	var connect *connectState
	if o.Snapshot == nil {
		if o.Load == nil {
			return nil, fmt.Errorf("tui: no snapshot")
		}
		o.Snapshot = &snapshot.Snapshot{Source: "cluster " + o.Server}
		connect = &connectState{server: o.Server}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	m := &Model{opts: o, now: o.Now, dark: true, keys: newKeyMap(), help: help.New(), width: 80, height: 24}
	m.world = newWorld(o.Snapshot, o.DeviceConfigMap, o.Context, o.Client != nil, o.Now)
	if o.HAMiVersion != "" && o.HAMiVersion != engine.DefaultHAMiVersion {
		m.world.hamiVersion = o.HAMiVersion
		m.world.build(o.Snapshot)
	}
	m.connect = connect
	if connect != nil {
		connect.since = o.Now()
	}
	m.setupLive()
	if o.Simulate && o.Client == nil && o.Load == nil {
		m.fetchMetrics, m.metricsEvery = m.simulator(), simulateEvery
		m.metrics = &MetricsMsg{Note: simulatedNote}
	}
	m.styles = newStyles(m.dark, o.NoColor)
	m.nodes = newTable(sortCol{"name", false}, sortCol{"memory", true}, sortCol{"cores", true}, sortCol{"slots", true},
		sortCol{"pods", true}, sortCol{"gpus", true})
	m.node = newTable(sortCol{"gpu", false}, sortCol{"memory", true}, sortCol{"cores", true}, sortCol{"pods", true})
	m.quotas = newTable(sortCol{"namespace", false}, sortCol{"memory", true}, sortCol{"cores", true})
	m.pending = newTable(sortCol{"namespace", false}, sortCol{"gpus", true}, sortCol{"age", true}, sortCol{"reason", false})
	m.queues = newTable(sortCol{"queue", false}, sortCol{"used", true}, sortCol{"pending", true})
	m.input = textinput.New()
	m.input.Prompt = ""
	m.pager = newPager()
	m.form = newWhatIfForm(o.Namespace)
	m.applyStyles()
	m.opts.Snapshot = nil // the world holds what it needs; a live world swaps in the informers' objects
	m.setData(m.world.data())
	if len(m.data.Pending) <= syncVerdicts {
		m.verdicts, m.verdictsGen = m.world.verdicts(m.data.Pending), m.data.Gen
		m.rebuildRows(viewPending)
	}
	m.layout()
	return m, nil
}

// setupLive prepares what keeps a live cluster live (Options.Client); nothing for a static snapshot.
func (m *Model) setupLive() {
	o := m.opts
	if o.Client == nil {
		return
	}
	m.watchVolcano = o.Dynamic != nil && m.world.volcano
	m.queue = newQueue()
	m.watchErr = make(chan error, 1)
	m.events = liveEvents(o.Client)
	if o.Agents != nil {
		m.fetchMetrics = agentFetcher(o.Client, *o.Agents)
		m.metricsEvery = o.MetricsInterval
		if m.metricsEvery <= 0 {
			m.metricsEvery = DefaultMetricsInterval
		}
		m.metrics = &MetricsMsg{Note: "live GPU usage: asking the node agents…"}
	}
}

// Messages.
type (
	wakeMsg     struct{}
	dataMsg     struct{ data *Data }
	verdictsMsg struct {
		gen      uint64
		verdicts map[string]*engine.Verdict
	}
	eventsMsg struct {
		pod    string
		events []*corev1.Event
		err    error
	}
	watchErrMsg struct{ err error }
)

// GPUMetrics is what the node agent measures on one GPU.
type GPUMetrics struct {
	UsedMemMiB  int64 // memory actually in use
	Utilization int   // percent, -1 when unknown
}

// MetricsMsg overlays live GPU usage on the allocation bars (keyed by GPU UUID). Note says where the
// numbers come from, or why there are none; a nil GPUs map means "not reachable". A live UI sends it itself,
// every MetricsInterval, from the node agents (metrics.go).
type MetricsMsg struct {
	GPUs map[string]GPUMetrics
	Note string
	// Warn shows Note as a warning (an agent did not answer, or the agents could not be listed).
	Warn bool
	// Nodes is each node's agent, by node name; Agents and Answered count them.
	Nodes            map[string]AgentStatus
	Agents, Answered int
}

// AgentStatus is one node's agent: namespace/name of its pod and, when it gave no numbers, why.
type AgentStatus struct {
	Pod, Error string
}

// syncVerdicts is how many pending pods New evaluates before the first frame; more are evaluated by Init's
// command, so a cluster with many waiting pods still shows its first frame at once.
const syncVerdicts = 50

// Init asks the terminal for its background (light or dark) and, when live, waits for changes.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if m.connect != nil {
		return tea.Batch(append(cmds, m.load(), connectTick())...)
	}
	if m.verdicts == nil {
		cmds = append(cmds, m.evaluate())
	}
	if m.queue != nil {
		cmds = append(cmds, m.waitWake(), m.waitWatchErr())
	}
	if m.fetchMetrics != nil {
		cmds = append(cmds, m.pollMetrics())
	}
	return tea.Batch(cmds...)
}

func (m *Model) waitWake() tea.Cmd {
	wake := m.queue.wake
	return func() tea.Msg {
		<-wake
		return wakeMsg{}
	}
}

func (m *Model) waitWatchErr() tea.Cmd {
	errc := m.watchErr
	return func() tea.Msg { return watchErrMsg{<-errc} }
}

// rebuild applies the queued changes off the UI goroutine and returns the new data.
func (m *Model) rebuild() tea.Cmd {
	w, q := m.world, m.queue
	return func() tea.Msg {
		changes, rs := q.drain()
		return dataMsg{w.apply(changes, rs)}
	}
}

// evaluate computes the pending pods' verdicts for the data shown, off the UI goroutine. One evaluation
// runs at a time; data arriving meanwhile is evaluated when it is done.
func (m *Model) evaluate() tea.Cmd {
	if m.evaluating {
		m.evalDirty = true
		return nil
	}
	m.evaluating = true
	w, d := m.world, m.data
	return func() tea.Msg { return verdictsMsg{gen: d.Gen, verdicts: w.verdicts(d.Pending)} }
}

// Update is the only place the model's state changes.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	if cmd, ok := m.updateConnect(msg); ok {
		m.layout()
		return m, cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		resized := msg.Width != m.width
		m.width, m.height = msg.Width, msg.Height
		if resized {
			m.rebuildRows(viewQueues) // its waiting jobs' lines wrap to the width
		}
	case tea.BackgroundColorMsg:
		m.dark = msg.IsDark()
		m.styles = newStyles(m.dark, m.opts.NoColor)
		m.applyStyles()
		m.form.last = "" // the answer is styled: redo it
		if m.view == viewWhatIf {
			cmds = append(cmds, m.askWhatIf())
		}
	case wakeMsg:
		cmds = append(cmds, m.waitWake())
		if m.building {
			m.dirty = true
		} else {
			m.building = true
			cmds = append(cmds, m.rebuild())
		}
	case dataMsg:
		m.building = false
		m.liveErr = ""
		m.setData(msg.data)
		cmds = append(cmds, m.evaluate())
		if m.dirty {
			m.dirty = false
			m.building = true
			cmds = append(cmds, m.rebuild())
		}
		if m.view == viewWhatIf {
			cmds = append(cmds, m.askWhatIf())
		}
	case whatIfMsg:
		cmds = append(cmds, m.showWhatIf(msg))
	case verdictsMsg:
		m.evaluating = false
		if msg.gen >= m.verdictsGen {
			// Verdicts of slightly older data are still better than "evaluating…".
			m.verdicts, m.verdictsGen = msg.verdicts, msg.gen
			m.rebuildRows(viewPending)
		}
		if m.evalDirty {
			m.evalDirty = false
			cmds = append(cmds, m.evaluate())
		}
	case eventsMsg:
		if msg.pod == m.pagerPod && m.view == viewVerdict {
			if msg.err != nil {
				m.status = "events: " + msg.err.Error()
			} else {
				m.openVerdict(msg.pod, msg.events, false)
			}
		}
	case watchErrMsg:
		m.liveErr = msg.err.Error() + " (retrying)"
		cmds = append(cmds, m.waitWatchErr())
	case MetricsMsg:
		mm := msg
		m.metrics = &mm
	case metricsPollMsg:
		mm := msg.MetricsMsg
		m.metrics = &mm
		cmds = append(cmds, m.nextMetrics())
	case metricsTickMsg:
		if m.fetchMetrics != nil {
			cmds = append(cmds, m.pollMetrics())
		}
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		cmd := m.handleMouse(msg)
		m.layout()
		return m, cmd
	case tea.KeyPressMsg:
		cmd := m.handleKey(msg)
		m.layout()
		return m, cmd
	default:
		if m.mode != modeNormal {
			var cmd tea.Cmd
			m.input, cmd = m.input.Update(msg)
			cmds = append(cmds, cmd)
		} else if m.view == viewWhatIf && m.form.editing {
			cmds = append(cmds, m.form.update(msg))
		}
	}
	m.layout()
	return m, tea.Batch(cmds...)
}

// applyStyles gives the components the style set.
func (m *Model) applyStyles() {
	m.help.Styles = m.styles.help
	m.input.SetStyles(m.styles.input)
	for i := range m.form.fields {
		m.form.fields[i].input.SetStyles(m.styles.input)
	}
}

// setData swaps in new data and rebuilds the table rows from it.
func (m *Model) setData(d *Data) {
	m.data = onlyNamespace(d, m.opts.OnlyNamespace)
	m.rebuildAllRows()
}

// onlyNamespace is d with the pending pods and quotas of namespace ns only; d itself when ns is empty.
func onlyNamespace(d *Data, ns string) *Data {
	if ns == "" || d == nil {
		return d
	}
	out := *d
	out.Quotas, out.Pending = nil, []*PendingView{}
	for _, q := range d.Quotas {
		if q.Namespace == ns {
			out.Quotas = append(out.Quotas, q)
		}
	}
	for _, p := range d.Pending {
		if p.Namespace == ns {
			out.Pending = append(out.Pending, p)
		}
	}
	out.Totals.Pending = len(out.Pending)
	return &out
}

func (m *Model) rebuildAllRows() {
	for _, v := range []viewID{viewNodes, viewNode, viewQuotas, viewPending, viewQueues} {
		m.rebuildRows(v)
	}
}

func (m *Model) rebuildRows(v viewID) {
	switch v {
	case viewNodes:
		m.nodes.setRows(m.nodeRows())
		if m.detail == "" && len(m.data.Nodes) > 0 {
			m.detail = m.nodes.selectedKey()
		}
	case viewNode:
		m.node.setRows(m.detailRows())
	case viewQuotas:
		m.quotas.setRows(m.quotaRows())
	case viewPending:
		m.pending.setRows(m.pendingRows())
	case viewQueues:
		m.queues.setRows(m.queueRows())
	}
}

func (m *Model) tableOf(v viewID) *table {
	switch v {
	case viewNodes:
		return m.nodes
	case viewNode:
		return m.node
	case viewQuotas:
		return m.quotas
	case viewPending:
		return m.pending
	case viewQueues:
		return m.queues
	}
	return nil
}

// bodyHeight is the number of lines between the header and the footer.
func (m *Model) bodyHeight() int { return max(m.height-headerLines-footerLines, 1) }

// tableHeight is the lines a view's table rows get (below its own heading lines).
func (m *Model) tableHeight(v viewID) int {
	if v == viewNode {
		return max(m.bodyHeight()-3, 1)
	}
	return max(m.bodyHeight()-1, 1)
}

// layout sizes the components to the window and keeps each cursor on screen.
func (m *Model) layout() {
	for _, v := range []viewID{viewNodes, viewNode, viewQuotas, viewPending, viewQueues} {
		m.tableOf(v).scroll(m.tableHeight(v))
	}
	if m.pager.Width() != m.width {
		m.pager.SetWidth(m.width)
		m.pager.SetContent(wrapProse(m.pagerText, m.width))
		m.form.answer.SetWidth(m.width)
		m.form.answer.SetContent(wrapProse(m.form.text, m.width))
	}
	m.pager.SetHeight(max(m.bodyHeight()-1, 1))
	m.form.answer.SetHeight(max(m.bodyHeight()-len(m.form.fields)-1, 1))
	m.input.SetWidth(max(m.width-4, 10))
	if m.mode == modeCommand {
		// The completions follow what is typed (prompt.go): the line is as wide as the text.
		m.input.SetWidth(len([]rune(m.input.Value())) + 1)
	}
	m.help.SetWidth(m.width)
}

// handleKey routes a key: ctrl+c always quits; the filter and command lines and the what-if form take
// their keys first; then the global keys.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := msg.String()
	if k == "ctrl+c" {
		return tea.Quit
	}
	m.status = ""
	switch m.mode {
	case modeFilter:
		return m.filterKey(msg)
	case modeCommand:
		return m.commandKey(msg)
	}
	if m.overlay != overlayNone {
		switch {
		case key.Matches(msg, m.keys.Back),
			m.overlay == overlayHelp && key.Matches(msg, m.keys.Help),
			m.overlay == overlayProblems && key.Matches(msg, m.keys.Problems):
			m.overlay = overlayNone
		case key.Matches(msg, m.keys.Help):
			m.openOverlay(overlayHelp)
		case key.Matches(msg, m.keys.Problems):
			m.openOverlay(overlayProblems)
		case key.Matches(msg, m.keys.Quit):
			return tea.Quit
		case m.scrollKey(msg) != 0:
			m.scrollOverlay(m.scrollKey(msg))
		case key.Matches(msg, m.keys.Top):
			m.overlayOff = 0
		case key.Matches(msg, m.keys.Bottom):
			m.scrollOverlay(1 << 20)
		}
		return nil
	}
	if m.view == viewWhatIf && m.form.editing {
		return m.formKey(msg)
	}
	if m.connect != nil {
		if cmd := m.connectKey(k); cmd != nil {
			return cmd
		}
	}
	switch {
	case key.Matches(msg, m.keys.Quit):
		return tea.Quit
	case key.Matches(msg, m.keys.Help):
		m.openOverlay(overlayHelp)
		return nil
	case key.Matches(msg, m.keys.Problems):
		m.openOverlay(overlayProblems)
		return nil
	case key.Matches(msg, m.keys.Command):
		m.mode = modeCommand
		m.input.Reset()
		m.input.Placeholder = "nodes, node NAME, quotas, pending, what-if, queues, quit"
		return m.input.Focus()
	case key.Matches(msg, m.keys.Filter):
		if t := m.tableOf(m.view); t != nil {
			m.mode = modeFilter
			m.input.Reset()
			m.input.Placeholder = "fuzzy filter"
			m.input.SetValue(t.filter)
			m.input.CursorEnd()
			return m.input.Focus()
		}
		return nil
	case key.Matches(msg, m.keys.NextView):
		m.switchTo(viewID((int(m.tabOf(m.view)) + 1) % len(viewNames)))
		return m.enterView()
	case key.Matches(msg, m.keys.PrevView):
		m.switchTo(viewID((int(m.tabOf(m.view)) + len(viewNames) - 1) % len(viewNames)))
		return m.enterView()
	case key.Matches(msg, m.keys.Views):
		m.switchTo(viewID(msg.Code - '1'))
		return m.enterView()
	case key.Matches(msg, m.keys.Back):
		m.back()
		return nil
	case key.Matches(msg, m.keys.Enter):
		return m.drill()
	}
	if m.view == viewVerdict {
		var cmd tea.Cmd
		m.pager, cmd = m.pager.Update(msg)
		return cmd
	}
	if m.view == viewGPU {
		if d := m.scrollKey(msg); d != 0 {
			m.scrollGPU(d)
		}
		return nil
	}
	if m.view == viewWhatIf {
		switch {
		case key.Matches(msg, m.keys.Edit):
			return m.form.focus()
		case key.Matches(msg, m.keys.Up, m.keys.Down, m.keys.PageUp, m.keys.PageDown):
			var cmd tea.Cmd
			m.form.answer, cmd = m.form.answer.Update(msg)
			return cmd
		}
		return nil
	}
	t := m.tableOf(m.view)
	if t == nil {
		return nil
	}
	h := m.tableHeight(m.view)
	switch {
	case key.Matches(msg, m.keys.Up):
		t.move(-1)
	case key.Matches(msg, m.keys.Down):
		t.move(1)
	case key.Matches(msg, m.keys.PageUp):
		t.move(-t.pageSize(h))
	case key.Matches(msg, m.keys.PageDown):
		t.move(t.pageSize(h))
	case key.Matches(msg, m.keys.Top):
		t.home()
	case key.Matches(msg, m.keys.Bottom):
		t.end()
	case key.Matches(msg, m.keys.Sort):
		t.cycleSort()
	case key.Matches(msg, m.keys.Reverse):
		t.reverse()
	case key.Matches(msg, m.keys.Compact):
		if m.view == viewNodes {
			m.compact = !m.compact
			m.rebuildRows(viewNodes)
		}
	}
	if m.view == viewNodes {
		if sel := m.nodes.selectedKey(); sel != "" {
			m.detail = sel
		}
	}
	return nil
}

// tabOf is the tab a view belongs to (the why-pending page is under Pending).
func (m *Model) tabOf(v viewID) viewID {
	if v == viewVerdict {
		return viewPending
	}
	if v == viewGPU {
		return viewNode
	}
	return v
}

// switchTo changes the view, remembering where esc goes back to.
func (m *Model) switchTo(v viewID) {
	if v == m.view {
		return
	}
	m.history = append(m.history, m.view)
	if len(m.history) > 32 {
		m.history = m.history[len(m.history)-32:]
	}
	m.view = v
	if v == viewNode {
		if sel := m.nodes.selectedKey(); sel != "" && sel != m.detail {
			m.detail = sel
		}
		m.rebuildRows(viewNode)
	}
}

// enterView does what a view needs when it is shown: the what-if view answers for its form (computed on
// first show, not at start). The form is not focused on arrival, so that tab and the number keys keep moving
// between views; enter (or e) edits it.
func (m *Model) enterView() tea.Cmd {
	if m.view == viewWhatIf {
		return m.askWhatIf()
	}
	return nil
}

// back is esc: clear the filter first, then go back to the previous view.
func (m *Model) back() {
	if t := m.tableOf(m.view); t != nil && t.filter != "" {
		t.setFilter("")
		return
	}
	for len(m.history) > 0 {
		v := m.history[len(m.history)-1]
		m.history = m.history[:len(m.history)-1]
		if v != m.view {
			m.view = v
			if v == viewNode {
				m.rebuildRows(viewNode)
			}
			return
		}
	}
}

// drill is enter: a node opens its detail, a GPU its pods, a pending pod its explanation, a quota or a queue its pending
// pods.
func (m *Model) drill() tea.Cmd {
	switch m.view {
	case viewNodes:
		if sel := m.nodes.selectedKey(); sel != "" {
			m.detail = sel
			m.node.setFilter("")
			m.switchTo(viewNode)
			m.node.home()
		}
	case viewNode:
		m.openGPU()
	case viewPending:
		if i := m.pending.selected(); i >= 0 {
			p := m.data.Pending[i]
			m.switchTo(viewVerdict)
			return m.openVerdict(p.Key(), nil, true)
		}
	case viewQuotas:
		if i := m.quotas.selected(); i >= 0 {
			ns := m.data.Quotas[i].Namespace
			m.switchTo(viewPending)
			m.pending.setFilter(ns + "/")
		}
	case viewQueues:
		if i := m.queues.selected(); i >= 0 {
			m.switchTo(viewPending)
			m.pending.setFilter(queueFilter(m.data.Queues[i].Queue))
		}
	case viewWhatIf:
		return m.form.focus()
	}
	return nil
}

func (m *Model) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	t := m.tableOf(m.view)
	switch msg.String() {
	case "esc":
		m.mode = modeNormal
		m.input.Blur()
		if t != nil {
			t.setFilter("")
		}
		return nil
	case "enter":
		m.mode = modeNormal
		m.input.Blur()
		return nil
	case "up", "down":
		if t != nil {
			t.move(map[string]int{"up": -1, "down": 1}[msg.String()])
		}
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if t != nil {
		t.setFilter(strings.TrimSpace(m.input.Value()))
	}
	return cmd
}

func (m *Model) commandKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.mode = modeNormal
		m.input.Blur()
		return nil
	case "enter":
		m.mode = modeNormal
		m.input.Blur()
		return m.runCommand(m.input.Value())
	case "tab":
		m.completePrompt() // prompt.go
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// commands maps what `:` accepts to views; a unique prefix is enough.
var commands = []struct {
	names []string
	view  viewID
}{
	{[]string{"nodes", "no", "gpus", "gpu"}, viewNodes},
	{[]string{"node", "detail"}, viewNode},
	{[]string{"quotas", "quota", "resourcequotas", "rq", "ns", "namespaces"}, viewQuotas},
	{[]string{"pending", "pods", "po", "pe"}, viewPending},
	{[]string{"what-if", "whatif", "wi", "w"}, viewWhatIf},
	{[]string{"queues", "queue", "volcano", "vq", "cards"}, viewQueues},
}

func (m *Model) runCommand(line string) tea.Cmd {
	fields := strings.Fields(strings.ToLower(line))
	if len(fields) == 0 {
		return nil
	}
	word := fields[0]
	switch word {
	case "q", "q!", "quit", "exit":
		return tea.Quit
	case "help", "?":
		m.openOverlay(overlayHelp)
		return nil
	case "problems", "problem", "prob":
		m.openOverlay(overlayProblems)
		return nil
	}
	var match []viewID
	for _, c := range commands {
		for _, n := range c.names {
			if n == word {
				match = []viewID{c.view}
				break
			}
		}
		if len(match) == 1 && match[0] == c.view {
			break
		}
	}
	if len(match) == 0 {
		seen := map[viewID]bool{}
		for _, c := range commands {
			for _, n := range c.names {
				if strings.HasPrefix(n, word) && !seen[c.view] {
					seen[c.view] = true
					match = append(match, c.view)
				}
			}
		}
	}
	if len(match) != 1 {
		m.status = fmt.Sprintf("unknown view %q: try nodes, node NAME, quotas, pending, what-if, queues", line)
		return nil
	}
	v := match[0]
	if v == viewNode && len(fields) > 1 {
		name := strings.Fields(line)[1]
		m.nodes.setFilter("")
		var names []string
		for _, n := range m.data.Nodes {
			names = append(names, n.Name)
		}
		if r := resolve.Resolve(name, names); r.Found() {
			name = r.Name // gpu-a100 → gpu-a100-01 when it is the only one; case does not matter
		}
		if !m.nodes.selectKey(name) {
			m.status = m.nodeNotFound(name)
			return nil
		}
		if name != m.detail {
			// switchTo does not rebuild when the Node view is already shown: its rows are the old node's GPUs.
			m.detail = name
			m.node.setFilter("")
			m.rebuildRows(viewNode)
			m.node.home()
		}
	}
	if (v == viewNodes || v == viewPending || v == viewQuotas || v == viewQueues) && len(fields) > 1 {
		// ":pending inference" filters as it jumps.
		m.switchTo(v)
		m.tableOf(v).setFilter(strings.Join(strings.Fields(line)[1:], " "))
		return m.enterView()
	}
	m.switchTo(v)
	return m.enterView()
}

// openVerdict renders the why-pending explanation of a pod into the pager; fetch asks the cluster for the
// pod's events when live.
func (m *Model) openVerdict(key string, events []*corev1.Event, fetch bool) tea.Cmd {
	ns, name, _ := strings.Cut(key, "/")
	in, ok := m.world.explain(ns, name)
	var b strings.Builder
	if !ok {
		fmt.Fprintf(&b, "Pod %s is gone.\n", key)
	} else {
		if events != nil {
			in.Events = events
		}
		fmt.Fprintf(&b, "Pod %s is Pending and not bound to a node.\n", key)
		if err := renderVerdict(&b, in); err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
	}
	if key != m.pagerPod {
		m.pager.GotoTop()
	}
	m.pagerPod = key
	m.pagerText = strings.TrimRight(b.String(), "\n")
	m.pager.SetContent(wrapProse(m.pagerText, m.width))
	if fetch && ok && m.events != nil {
		get := m.events
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			evs, err := get(ctx, ns, name)
			if evs == nil {
				evs = []*corev1.Event{}
			}
			return eventsMsg{pod: key, events: evs, err: err}
		}
	}
	return nil
}

// newPager is a scrollable text area; left and right scroll the wide tables of an explanation.
func newPager() viewport.Model {
	v := viewport.New()
	v.SetHorizontalStep(8)
	return v
}

// NoColorFromEnv is what Options.NoColor should be for this process: NO_COLOR set to anything but the
// empty string (https://no-color.org).
func NoColorFromEnv() bool { return os.Getenv("NO_COLOR") != "" }

// scrollKey is how far a scrolling key moves a page (up, down, page up, page down), 0 for any other key.
func (m *Model) scrollKey(msg tea.KeyPressMsg) int {
	switch {
	case key.Matches(msg, m.keys.Up):
		return -1
	case key.Matches(msg, m.keys.Down):
		return 1
	case key.Matches(msg, m.keys.PageUp):
		return -m.bodyHeight()
	case key.Matches(msg, m.keys.PageDown):
		return m.bodyHeight()
	}
	return 0
}
