package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// Connecting: with Options.Load the UI opens at once, says which API server it is asking and for how long,
// and shows the cluster when the first list is in. When the API server does not answer, the error is shown
// in full with the next try's countdown (r retries now, q quits), instead of a blank screen.

// Loaded is what Options.Load returns: the cluster as just listed and the clients that keep it live.
type Loaded struct {
	Snapshot *snapshot.Snapshot
	Client   kubernetes.Interface
	Dynamic  dynamic.Interface
}

// retryEvery is how long the UI waits before asking an API server that did not answer again.
const retryEvery = 5 * time.Second

type (
	loadedMsg struct {
		l   Loaded
		err error
	}
	connectTickMsg struct{}
)

// connectState is the UI while the first list is not in.
type connectState struct {
	server  string    // what is asked (Options.Server)
	since   time.Time // when this try began
	err     string    // the last try's error; empty while a try runs
	retryAt time.Time
	tries   int
	// unauthorized: the API server refused the credentials (the hint names the user, not the network).
	unauthorized bool
}

func (m *Model) load() tea.Cmd {
	load, ctx := m.opts.Load, m.context()
	m.connect.since, m.connect.err = m.now(), ""
	m.connect.tries++
	return func() tea.Msg {
		l, err := load(ctx)
		return loadedMsg{l, err}
	}
}

func (m *Model) context() context.Context {
	if m.ctx != nil {
		return m.ctx
	}
	return context.Background()
}

func connectTick() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return connectTickMsg{} })
}

// connected swaps the first list in and starts what keeps it live.
func (m *Model) connected(l Loaded) tea.Cmd {
	m.connect = nil
	o := m.opts
	o.Snapshot, o.Client, o.Dynamic = l.Snapshot, l.Client, l.Dynamic
	m.opts = o
	m.setStore(newWorld(l.Snapshot, o.DeviceConfigMap, o.Context, o.Client != nil, o.Now))
	if o.HAMiVersion != "" {
		m.store.hamiVersion = o.HAMiVersion
		m.store.build(l.Snapshot)
	}
	m.opts.Snapshot = nil
	m.setupLive()
	m.setData(m.store.data())
	m.verdicts, m.verdictsGen = nil, 0
	cmds := []tea.Cmd{m.evaluate()}
	if m.queue != nil {
		if err := watch(m.context(), o.Client, o.DeviceConfigMap, m.queue, m.watchErr); err != nil {
			m.liveErr = err.Error()
		} else {
			cmds = append(cmds, m.waitWake(), m.waitWatchErr())
		}
		if m.watchVolcano {
			if err := watchVolcano(m.context(), o.Dynamic, m.queue, m.watchErr); err != nil {
				m.liveErr = err.Error()
			}
		}
	}
	if m.queue != nil {
		cmds = append(cmds, ageTick())
	}
	if m.probeFn != nil {
		cmds = append(cmds, m.nextProbe())
	}
	if m.fetchMetrics != nil {
		cmds = append(cmds, m.pollMetrics())
	}
	return tea.Batch(cmds...)
}

// updateConnect handles the connecting messages; false when msg is not one.
func (m *Model) updateConnect(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case loadedMsg:
		if m.connect == nil {
			return nil, true // a late answer of a try already superseded
		}
		if msg.err != nil {
			m.connect.err = msg.err.Error()
			m.connect.unauthorized = apierrors.IsUnauthorized(msg.err) || strings.Contains(msg.err.Error(), "Unauthorized")
			m.connect.retryAt = m.now().Add(retryEvery)
			return nil, true
		}
		return m.connected(msg.l), true
	case connectTickMsg:
		if m.connect == nil {
			return nil, true
		}
		if m.connect.err != "" && !m.now().Before(m.connect.retryAt) {
			return tea.Batch(m.load(), connectTick()), true
		}
		return connectTick(), true
	}
	return nil, false
}

// connectKey: r retries at once after an error.
func (m *Model) connectKey(k string) tea.Cmd {
	if k == "r" && m.connect.err != "" { // a try is not running
		return m.load()
	}
	return nil
}

// renderConnect is the body while connecting: what is asked and for how long, or the error and the retry.
func (m *Model) renderConnect() []string {
	s, c := m.styles, m.connect
	server := c.server
	if server == "" {
		server = "the API server"
	}
	if c.err == "" {
		wait := m.now().Sub(c.since).Truncate(time.Second)
		lines := []string{"", s.live.Render(fmt.Sprintf("  connecting to %s… %s", server, wait))}
		if wait >= 3*time.Second {
			lines = append(lines, s.dim.Render("  listing nodes, pods and quotas; a hung API server keeps this line here until the client gives up"))
		}
		if c.tries > 1 {
			lines = append(lines, s.dim.Render(fmt.Sprintf("  try %d", c.tries)))
		}
		return lines
	}
	lines := []string{"", s.errText.Render(fmt.Sprintf("  cannot list the cluster at %s", server)), ""}
	lines = append(lines, splitLines(wrapProse("  "+c.err, m.width))...)
	left := max(c.retryAt.Sub(m.now()).Round(time.Second), 0)
	hint := "  check the kubeconfig context (--context), the network, and `kubectl get --raw /readyz`"
	if c.unauthorized {
		hint = "  " + unauthorizedHint(m.opts.User, m.opts.Context)
	}
	lines = append(lines, "", fmt.Sprintf("  retrying in %s (try %d) · r retry now · q quit", left, c.tries), s.dim.Render(hint))
	return lines
}

// connectHeader is the header's state while connecting.
func (m *Model) connectHeader() string {
	if m.connect.unauthorized {
		who := "✗ unauthorized"
		if m.opts.User != "" {
			who += " (user " + m.opts.User + ")"
		}
		return m.styles.errText.Render(who)
	}
	if m.connect.err != "" {
		return m.styles.errText.Render("✗ not connected")
	}
	return m.styles.live.Render("◌ connecting…")
}
