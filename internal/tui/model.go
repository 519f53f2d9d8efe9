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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
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
	// Contexts are the kubeconfig's contexts, for `:ctx NAME` (Run then returns *SwitchContext).
	Contexts []string
	// User is the context's user (its AuthInfo), named when the API server refuses its credentials.
	User string
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
	if err == nil && m.nextContext != "" {
		return &SwitchContext{Context: m.nextContext}
	}
	return err
}

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
	// common is the views' narrow context (common.go): the data, verdicts and live usage shown, the queries,
	// the styles, the keys, the size and the clock. The Model owns it; a view gets a pointer for one call.
	common

	opts  Options
	store *world // the data layer (world.go, live.go, data.go, queries.go)
	queue *queue // live only

	watchErr chan error
	liveErr  string
	// conn is the connection to the API server (conn.go); probeFn asks it whether it answers.
	conn         connState
	probeFn      func(context.Context) error
	watchVolcano bool // live, with a dynamic client, on a cluster that serves Volcano's CRDs

	verdictsGen uint64
	// nextContext is the kubeconfig context `:ctx NAME` asked for; Run returns it.
	nextContext string
	// full is the data of every namespace; data (common) is what the namespace shown leaves of it.
	full *Data

	// The agents' poll (live with Options.Agents): one reading at a time, the next one interval after.
	fetchMetrics func(context.Context) MetricsMsg
	metricsEvery time.Duration
	ctx          context.Context // Run's; nil (background) for models driven by tests

	building, dirty       bool // a rebuild runs; another is due
	evaluating, evalDirty bool // pending verdicts are computed; again when done

	dark bool
	help help.Model

	views      []view // the registry's views (views.go), in its order
	view       int    // the focused one, an index into views
	history    []int  // where esc goes back to
	mode       inputMode
	overlay    overlayID // help or problems, over the view
	overlayOff int       // its scroll offset
	status     string
	input      textinput.Model // the filter and command line

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
	m := &Model{opts: o, dark: true, help: help.New()}
	m.now, m.keys, m.width, m.height = o.Now, newKeyMap(), 80, 24
	m.setStore(newWorld(o.Snapshot, o.DeviceConfigMap, o.Context, o.Client != nil, o.Now))
	m.namespace = o.OnlyNamespace
	if o.HAMiVersion != "" && o.HAMiVersion != engine.DefaultHAMiVersion {
		m.store.hamiVersion = o.HAMiVersion
		m.store.build(o.Snapshot)
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
	m.views = newViews(m.opts)
	m.keys.Views = viewsKey(m.tabInfos())
	m.tabKeys = tabKeys(m.tabInfos())
	m.input = textinput.New()
	m.input.Prompt = ""
	m.applyStyles()
	m.opts.Snapshot = nil // the world holds what it needs; a live world swaps in the informers' objects
	m.setData(m.store.data())
	// No verdict before the first frame: the Nodes view shows none (its pending count is Data's). Init
	// evaluates them in the background; a view that shows them evaluates them first if they are not in yet.
	m.verdictsIfShown()
	m.layout()
	m.flush()
	return m, nil
}

// setStore puts a new data layer in: the Model keeps it, the views ask it questions through common.world.
func (m *Model) setStore(w *world) {
	m.store, m.world = w, w
}

// setupLive prepares what keeps a live cluster live (Options.Client); nothing for a static snapshot.
func (m *Model) setupLive() {
	o := m.opts
	if o.Client == nil {
		return
	}
	m.watchVolcano = o.Dynamic != nil && m.store.volcano
	m.queue = newQueue()
	m.watchErr = make(chan error, 1)
	m.events = liveEvents(o.Client)
	m.probeFn, m.conn = apiProbe(o.Client), connState{lastOK: m.now()}
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
	// Pods are the processes the agents found in each pod's cgroups, by namespace/name.
	Pods map[string][]ProcessMetrics
	// Migs are the MIG instances the agents found on each MIG GPU, by the GPU's UUID.
	Migs map[string][]MigMetrics
}

// MigMetrics is one MIG instance as the node agent lists it: profile, slices, whether processes run on it,
// and the pod whose hami.io/vgpu-mig-allocations names it ("" when none does).
type MigMetrics struct {
	Profile string
	Start   int32
	Size    int32
	GPUInst uint32
	MigUUID string
	Busy    bool
	Pod     string // namespace/name
}

// ProcessMetrics is one process of a pod on one GPU, as the node agent measures it.
type ProcessMetrics struct {
	GPU        string // UUID
	PID        uint32
	UsedMemMiB int64
}

// AgentStatus is one node's agent: namespace/name of its pod and, when it gave no numbers, why.
type AgentStatus struct {
	Pod, Error string
}

// syncVerdicts is how many pending pods a view that shows verdicts evaluates when it is shown before Init's
// evaluation came back; more wait for that evaluation ("evaluating…"), so the key press never stalls.
const syncVerdicts = 50

// verdictsIfShown evaluates the pending pods' verdicts at once when the view shown lists them and none were
// evaluated yet (Init's background evaluation did not come back): the screen then shows them, not
// "evaluating…", as it did when New evaluated them before the first frame.
func (m *Model) verdictsIfShown() {
	if m.verdicts != nil || m.data == nil || !m.current().info().verdicts || len(m.data.Pending) > syncVerdicts {
		return
	}
	m.verdicts, m.verdictsGen = m.store.verdicts(m.data.Pending), m.data.Gen
	m.verdictsChanged()
}

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
		cmds = append(cmds, m.waitWake(), m.waitWatchErr(), ageTick())
	}
	if m.probeFn != nil {
		cmds = append(cmds, m.nextProbe())
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

// ageTickMsg redraws a live UI every second, so that ages tick between the cluster's changes.
type ageTickMsg struct{}

func ageTick() tea.Cmd { return tea.Tick(time.Second, func(time.Time) tea.Msg { return ageTickMsg{} }) }

// rebuild applies the queued changes off the UI goroutine and returns the new data.
func (m *Model) rebuild() tea.Cmd {
	w, q := m.store, m.queue
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
	w, d := m.store, m.data
	return func() tea.Msg { return verdictsMsg{gen: d.Gen, verdicts: w.verdicts(d.Pending)} }
}

// Update is the only place the model's state changes. What the views sent meanwhile is routed after
// (flush), then the components are sized to the window.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	before := m.flush() // sent while the views were laid out
	cmd := m.update(msg)
	cmd = tea.Batch(before, cmd, m.flush())
	m.layout()
	return m, cmd
}

// shared is the views' context for one call, with what the Model knows of the moment filled in.
func (m *Model) shared() *common {
	c := &m.common
	c.shown, c.typing, c.tableRows = m.current().info().name, m.mode != modeNormal, m.tableHeight(m.current())
	return c
}

// flush routes the messages the views sent (common.send): showMsg pushes a view, statusMsg fills the footer,
// any other goes to every view. Messages sent while routing are routed too, up to a bound that only a loop
// between views would reach.
func (m *Model) flush() tea.Cmd {
	var cmds []tea.Cmd
	for n := 0; len(m.outbox) > 0 && n < 64; n++ {
		msg := m.outbox[0]
		m.outbox = m.outbox[1:]
		switch msg := msg.(type) {
		case showMsg:
			i := m.indexOf(msg.view)
			if i < 0 {
				continue
			}
			m.switchTo(i)
			if t := m.views[i].rows(); t != nil && msg.filter != nil {
				t.setFilter(*msg.filter)
			}
		case statusMsg:
			m.status = string(msg)
		default:
			for _, v := range m.views {
				cmds = append(cmds, v.update(m.shared(), msg))
			}
		}
	}
	m.outbox = nil
	return tea.Batch(cmds...)
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	if cmd, ok := m.updateConnect(msg); ok {
		return cmd
	}
	if cmd, ok := m.updateProbe(msg); ok {
		return cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		resized := msg.Width != m.width
		m.width, m.height = msg.Width, msg.Height
		if resized {
			for _, v := range m.views {
				if v.info().wraps {
					v.setData(m.shared()) // its rows' lines wrap to the width
				}
			}
		}
	case tea.BackgroundColorMsg:
		m.dark = msg.IsDark()
		m.styles = newStyles(m.dark, m.opts.NoColor)
		m.applyStyles()
		cmds = append(cmds, m.current().refresh(m.shared()))
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
		cmds = append(cmds, m.current().refresh(m.shared()))
	case verdictsMsg:
		m.evaluating = false
		if msg.gen >= m.verdictsGen {
			// Verdicts of slightly older data are still better than "evaluating…".
			m.verdicts, m.verdictsGen = msg.verdicts, msg.gen
			m.verdictsChanged()
		}
		if m.evalDirty {
			m.evalDirty = false
			cmds = append(cmds, m.evaluate())
		}
	case watchErrMsg:
		m.liveErr = msg.err.Error() + " (retrying)"
		if apierrors.IsUnauthorized(msg.err) {
			m.conn.observe(msg.err, m.now())
		}
		cmds = append(cmds, m.waitWatchErr(), m.probe()) // is the API server there? ask it now
	case ageTickMsg:
		// Nothing changes but the clock: the frame drawn after this message shows the ages of now.
		cmds = append(cmds, ageTick())
	case MetricsMsg:
		mm := msg
		m.setMetrics(&mm)
	case metricsPollMsg:
		mm := msg.MetricsMsg
		m.setMetrics(&mm)
		cmds = append(cmds, m.nextMetrics())
	case metricsTickMsg:
		if m.fetchMetrics != nil {
			cmds = append(cmds, m.pollMetrics())
		}
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		return m.handleMouse(msg)
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	default:
		// The views' own messages (a what-if answer, a pod's events) and the inputs' (a cursor's blink).
		if m.mode != modeNormal {
			var cmd tea.Cmd
			m.input, cmd = m.input.Update(msg)
			cmds = append(cmds, cmd)
		}
		for _, v := range m.views {
			cmds = append(cmds, v.update(m.shared(), msg))
		}
	}
	return tea.Batch(cmds...)
}

// setMetrics shows a reading of live usage, adds it to the GPUs' history and tells the views (their rows
// sort by it).
func (m *Model) setMetrics(mm *MetricsMsg) {
	m.metrics = mm
	if m.utilHist == nil {
		m.utilHist = utilHistory{}
	}
	m.utilHist.add(mm)
	for _, v := range m.views {
		if v.info().live {
			v.setData(m.shared())
		}
	}
}

// restyleMsg tells the views that the styles changed (the terminal's background is known).
type restyleMsg struct{}

// applyStyles gives the components the style set.
func (m *Model) applyStyles() {
	m.help.Styles = m.styles.help
	m.input.SetStyles(m.styles.input)
	for _, v := range m.views {
		v.update(m.shared(), restyleMsg{})
	}
}

// setData swaps in new data and rebuilds the views' rows from it.
func (m *Model) setData(d *Data) {
	m.full = d
	m.data = onlyNamespace(d, m.opts.OnlyNamespace)
	for _, v := range m.views {
		v.setData(m.shared())
	}
}

// verdictsChanged rebuilds the rows of the views that show verdicts.
func (m *Model) verdictsChanged() {
	for _, v := range m.views {
		if v.info().verdicts {
			v.setData(m.shared())
		}
	}
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

// tableHeight is the lines a view's table rows get (below its own heading lines).
func (m *Model) tableHeight(v view) int {
	return max(m.bodyHeight()-v.info().headLines-v.info().footLines, 1)
}

// layout sizes the components to the window and keeps each cursor on screen.
func (m *Model) layout() {
	for i, v := range m.views {
		v.layout(m.shared()) // first: a view's heading lines may follow the width
		// A view off screen whose rows wait for their first use (table.setRowsLater) is scrolled when shown.
		if t := v.rows(); t != nil && (i == m.view || !t.waiting()) {
			t.scroll(m.tableHeight(v))
		}
	}
	m.input.SetWidth(max(m.width-4, 10))
	if m.mode == modeCommand {
		// The completions follow what is typed (prompt.go): the line is as wide as the text.
		m.input.SetWidth(len([]rune(m.input.Value())) + 1)
	}
	m.help.SetWidth(m.width)
}

// handleKey routes a key: ctrl+c always quits; the filter and command lines and a view being edited take
// their keys first; then the global keys; then the focused view.
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
	v := m.current()
	if v.editing() {
		return v.update(m.shared(), msg)
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
	case key.Matches(msg, m.keys.AllNamespaces):
		m.setNamespace("")
		return nil
	case key.Matches(msg, m.keys.YAML), key.Matches(msg, m.keys.Describe):
		return m.openObject(key.Matches(msg, m.keys.YAML))
	case key.Matches(msg, m.keys.Command):
		m.mode = modeCommand
		m.input.Reset()
		m.input.Placeholder = strings.Join(append(commandWords(m.tabInfos()), "quit"), ", ")
		return m.input.Focus()
	case key.Matches(msg, m.keys.Filter):
		if t := v.rows(); t != nil {
			m.mode = modeFilter
			m.input.Reset()
			m.input.Placeholder = "fuzzy filter"
			m.input.SetValue(t.filter)
			m.input.CursorEnd()
			return m.input.Focus()
		}
		return nil
	case key.Matches(msg, m.keys.NextView):
		return m.showTab(m.tabOf(m.view) + 1)
	case key.Matches(msg, m.keys.PrevView):
		return m.showTab(m.tabOf(m.view) - 1)
	case key.Matches(msg, m.keys.Views):
		return m.showTab(int(msg.Code - '1'))
	case key.Matches(msg, m.keys.Back):
		m.back()
		return nil
	case key.Matches(msg, m.keys.Enter):
		return v.drill(m.shared())
	}
	return v.update(m.shared(), msg)
}

// switchTo shows the view at registry position i, remembering where esc goes back to.
func (m *Model) switchTo(i int) {
	if i == m.view {
		return
	}
	m.history = append(m.history, m.view)
	if len(m.history) > 32 {
		m.history = m.history[len(m.history)-32:]
	}
	m.view = i
	m.verdictsIfShown()
	m.views[i].focus(m.shared(), false)
}

// enterView starts what the view shown needs when it is shown by a tab, a number key, a click or `:`.
func (m *Model) enterView() tea.Cmd { return m.current().refresh(m.shared()) }

// back is esc: clear the filter first, then go back to the previous view.
func (m *Model) back() {
	if t := m.current().rows(); t != nil && t.filter != "" {
		t.setFilter("")
		return
	}
	for len(m.history) > 0 {
		v := m.history[len(m.history)-1]
		m.history = m.history[:len(m.history)-1]
		if v != m.view {
			m.view = v
			m.verdictsIfShown()
			m.views[v].focus(m.shared(), true)
			return
		}
	}
}

func (m *Model) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	t := m.current().rows()
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

// runCommand is `:`: the global commands, or a view by one of its words (a unique prefix is enough) with
// what follows for the view (views.go: jump).
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
	case "ns", "namespace":
		m.nsCommand(strings.Fields(line)[1:])
		return nil
	case "ctx", "context":
		return m.ctxCommand(strings.Fields(line)[1:])
	}
	match := m.matchViews(word)
	if len(match) != 1 {
		m.status = fmt.Sprintf("unknown view %q: try %s", line, strings.Join(commandWords(m.tabInfos()), ", "))
		return nil
	}
	if !m.views[match[0]].jump(m.shared(), strings.Fields(line)[1:]) {
		return nil
	}
	m.switchTo(match[0])
	return m.enterView()
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
