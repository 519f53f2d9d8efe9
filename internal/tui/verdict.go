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
// a pager, with the pod's events once the cluster answers (live only). It follows the cluster: every new
// data re-evaluates the pod while the page is on screen (a raised quota turns ResourceQuotaNotFit into a fit),
// and a pod deleted meanwhile keeps its last explanation under a line that says it is gone.
type verdictPage struct {
	page
	pager viewport.Model
	pod   string // namespace/name shown
	text  string // its text, unwrapped
	// events are the pod's events as last read (nil until the cluster answered, or for a snapshot).
	events []*corev1.Event
	// gen is the data generation the text was evaluated on; gone is when the pod was first missed.
	gen  uint64
	gone time.Time
}

func newVerdictPage(Options) view { return &verdictPage{pager: newPager()} }

func (vp *verdictPage) info() viewInfo { return viewInfo{name: "Why pending", parent: "Pending"} }

// update opens a pod's page, scrolls the pager, and takes the pod's events when they come.
func (vp *verdictPage) update(m *common, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case openWhyMsg:
		vp.events = nil
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
				vp.events = msg.events
				vp.open(m, msg.pod, msg.events, false)
			}
		}
	}
	return nil
}

// setData re-evaluates the pod shown on new data while the page is on screen; focus does when it comes back.
func (vp *verdictPage) setData(m *common) {
	if vp.pod != "" && m.focused(vp) && m.data.Gen != vp.gen {
		vp.open(m, vp.pod, vp.events, false)
	}
}

func (vp *verdictPage) focus(m *common, back bool) {
	if back && vp.pod != "" && m.data.Gen != vp.gen {
		vp.open(m, vp.pod, vp.events, false)
	}
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
	banner := 0
	if !vp.gone.IsZero() {
		banner = 1
	}
	vp.pager.SetHeight(max(m.bodyHeight()-1-banner, 1))
}

// goneLine says the pod shown was deleted, above its last explanation.
func (vp *verdictPage) goneLine() string {
	return "gone: deleted from the cluster at " + vp.gone.Format("15:04:05") + " · its last explanation below"
}

// render is the title and the pager (the Model clips the page to the body).
func (vp *verdictPage) render(m *common, _ int) []string {
	s := m.styles
	title := s.title.Render("Why pending: "+vp.pod) + s.dim.Render(fmt.Sprintf("  (esc back · ↑↓ pgup pgdn ←→ scroll · %d%%)", int(vp.pager.ScrollPercent()*100)))
	lines := []string{title}
	if !vp.gone.IsZero() {
		lines = append(lines, s.warn.Render(vp.goneLine()))
	}
	return append(lines, splitLines(vp.pager.View())...)
}

// open renders the why-pending explanation of a pod into the pager; fetch asks the cluster for the pod's
// events when live.
func (vp *verdictPage) open(m *common, key string, events []*corev1.Event, fetch bool) tea.Cmd {
	ns, name, _ := strings.Cut(key, "/")
	a, ok := m.world.explain(ns, name, events)
	if key != vp.pod {
		vp.pager.GotoTop()
		vp.text, vp.gone = "", time.Time{}
	}
	vp.pod = key
	if m.data != nil {
		vp.gen = m.data.Gen
	}
	switch {
	case ok:
		var b strings.Builder
		if err := render.WhyPending(&b, &a, false, nil); err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		vp.text, vp.gone = strings.TrimRight(b.String(), "\n"), time.Time{}
	case vp.gone.IsZero():
		// Deleted while the page was open (or before it opened): the last explanation stays, marked.
		vp.gone = m.now()
		if vp.text == "" {
			vp.text = "Pod " + key + " is not in the cluster."
		}
	}
	off := vp.pager.YOffset()
	vp.pager.SetContent(wrapProse(vp.text, m.width))
	vp.pager.SetYOffset(off) // a re-evaluation keeps the place
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
