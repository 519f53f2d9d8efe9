package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
)

// The connection to the API server of a live UI, in the header: live; stale since the last answer while the
// API server does not answer (the informers retry by themselves, the numbers shown are the last ones they
// had); unauthorized, with the kubeconfig user, when it refuses the credentials. The informers' watch errors
// alone do not tell: a killed API server can leave a watch quiet for a long time, and nothing says when it is
// back. So the UI asks the API server itself (GET /version) every few seconds, at once after a watch error.

// Probe intervals: while the API server answers, and while it does not.
const (
	probeEvery      = 5 * time.Second
	probeRetryEvery = 2 * time.Second
	probeTimeout    = 5 * time.Second
)

// connKind is what the header says of the connection.
type connKind int

const (
	connLive connKind = iota
	connStale
	connUnauthorized
)

// connState is the live UI's connection to the API server.
type connState struct {
	kind   connKind
	lastOK time.Time // the last answer: the data is as of then while the connection is stale
	tries  int       // probes that failed since the last answer
	err    string    // the last failure, on one line

	probing, tickPending bool
}

type (
	probeMsg     struct{ err error }
	probeTickMsg struct{}
)

// apiProbe asks the API server for its version, as cheap a request as there is, with ctx's deadline.
func apiProbe(cs kubernetes.Interface) func(context.Context) error {
	rc := cs.Discovery().RESTClient()
	if rc == nil { // client-go's fake clientset: no REST client to ask
		return func(context.Context) error {
			_, err := cs.Discovery().ServerVersion()
			return err
		}
	}
	return func(ctx context.Context) error {
		return rc.Get().AbsPath("/version").Do(ctx).Error()
	}
}

// probe asks the API server, unless a probe runs already.
func (m *Model) probe() tea.Cmd {
	if m.probeFn == nil || m.conn.probing {
		return nil
	}
	m.conn.probing = true
	p, ctx := m.probeFn, m.context()
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		return probeMsg{p(ctx)}
	}
}

// observe takes a probe's answer (or a watch error) into the state.
func (c *connState) observe(err error, now time.Time) {
	switch {
	case err == nil:
		c.kind, c.lastOK, c.tries, c.err = connLive, now, 0, ""
		return
	case apierrors.IsUnauthorized(err):
		c.kind = connUnauthorized
	default:
		c.kind = connStale
	}
	c.tries++
	c.err = strings.Join(strings.Fields(err.Error()), " ")
}

// updateProbe handles the probe's messages; false when msg is not one.
func (m *Model) updateProbe(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case probeMsg:
		m.conn.probing = false
		was := m.conn.kind
		m.conn.observe(msg.err, m.now())
		if msg.err == nil && was != connLive {
			m.liveErr = "" // the informers reconnect by themselves; the last watch error is history
		}
		return m.nextProbe(), true
	case probeTickMsg:
		m.conn.tickPending = false
		return m.probe(), true
	}
	return nil, false
}

// nextProbe schedules the next probe: sooner while the API server does not answer.
func (m *Model) nextProbe() tea.Cmd {
	if m.conn.tickPending {
		return nil
	}
	m.conn.tickPending = true
	every := probeEvery
	if m.conn.kind != connLive {
		every = probeRetryEvery
	}
	return tea.Tick(every, func(time.Time) tea.Msg { return probeTickMsg{} })
}

// connHeader is the header's state of a live UI: "● live", "◐ stale since 20:43:44 · reconnecting",
// "✗ unauthorized (user alice)".
func (m *Model) connHeader() string {
	s, c := m.styles, m.conn
	switch c.kind {
	case connStale:
		return s.warn.Render("◐ stale since " + c.lastOK.Format("15:04:05") + " · reconnecting")
	case connUnauthorized:
		who := "unauthorized"
		if m.opts.User != "" {
			who += " (user " + m.opts.User + ")"
		}
		return s.errText.Render("✗ " + who)
	}
	return s.live.Render("● live")
}

// connNote is the header's note on a lost connection: what failed and what to do about it.
func (m *Model) connNote() string {
	s, c := m.styles, m.conn
	switch c.kind {
	case connStale:
		return s.warn.Render(fmt.Sprintf("reconnecting (try %d): the API server does not answer; the numbers are as of %s: %s", c.tries,
			c.lastOK.Format("15:04:05"), c.err))
	case connUnauthorized:
		return s.errText.Render(unauthorizedHint(m.opts.User, m.opts.Context))
	}
	return ""
}

// unauthorizedHint says the credentials were refused and what to change.
func unauthorizedHint(user, context string) string {
	who := "the kubeconfig's credentials"
	if user != "" {
		who = "the credentials of user " + user
	}
	if context != "" {
		who += " (context " + context + ")"
	}
	return "the API server refuses " + who + ": renew the token (or log in again), or pick another --context"
}
