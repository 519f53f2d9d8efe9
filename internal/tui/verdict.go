package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/render"
)

// verdictPage is the why-pending page of one pod, under the Pending tab: the CLI's why-pending explanation in
// a pager, with the pod's events once the cluster answers (live only).
type verdictPage struct {
	page
	pager viewport.Model
	pod   string // namespace/name shown
	text  string // its text, unwrapped
}

func newVerdictPage(Options) view { return &verdictPage{pager: newPager()} }

func (vp *verdictPage) info() viewInfo { return viewInfo{name: "Why pending", parent: "Pending"} }

// update opens a pod's page, scrolls the pager, and takes the pod's events when they come.
func (vp *verdictPage) update(m *common, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case openWhyMsg:
		return vp.open(m, msg.pod, nil, true)
	case tea.KeyPressMsg:
		var cmd tea.Cmd
		vp.pager, cmd = vp.pager.Update(msg)
		return cmd
	case eventsMsg:
		if msg.pod == vp.pod && m.focused(vp) {
			if msg.err != nil {
				m.send(statusMsg("events: " + msg.err.Error()))
			} else {
				vp.open(m, msg.pod, msg.events, false)
			}
		}
	}
	return nil
}

func (vp *verdictPage) wheel(_ *common, dir int) {
	if dir < 0 {
		vp.pager.ScrollUp(wheelStep)
	} else {
		vp.pager.ScrollDown(wheelStep)
	}
}

func (vp *verdictPage) layout(m *common) {
	if vp.pager.Width() != m.width {
		vp.pager.SetWidth(m.width)
		vp.pager.SetContent(wrapProse(vp.text, m.width))
	}
	vp.pager.SetHeight(max(m.bodyHeight()-1, 1))
}

// render is the title and the pager (the Model clips the page to the body).
func (vp *verdictPage) render(m *common, _ int) []string {
	s := m.styles
	title := s.title.Render("Why pending: "+vp.pod) + s.dim.Render(fmt.Sprintf("  (esc back · ↑↓ pgup pgdn ←→ scroll · %d%%)", int(vp.pager.ScrollPercent()*100)))
	return append([]string{title}, splitLines(vp.pager.View())...)
}

// open renders the why-pending explanation of a pod into the pager; fetch asks the cluster for the pod's
// events when live.
func (vp *verdictPage) open(m *common, key string, events []*corev1.Event, fetch bool) tea.Cmd {
	ns, name, _ := strings.Cut(key, "/")
	a, ok := m.world.explain(ns, name, events)
	var b strings.Builder
	if !ok {
		fmt.Fprintf(&b, "Pod %s is gone.\n", key)
	} else if err := render.WhyPending(&b, &a, false, nil); err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	if key != vp.pod {
		vp.pager.GotoTop()
	}
	vp.pod = key
	vp.text = strings.TrimRight(b.String(), "\n")
	vp.pager.SetContent(wrapProse(vp.text, m.width))
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
