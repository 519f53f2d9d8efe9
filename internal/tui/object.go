package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// The object page, k9s' y and d: the YAML of the object selected in the view on screen, or its description
// (describe.go), as the cluster has it now. It follows the cluster like the other pages: new data redraws
// it, and a deleted object keeps its last text under a line that says it is gone.

// objectRef names a cluster object: kind "Node", "Pod", "ResourceQuota" (key: a namespace) or "Queue".
type objectRef struct{ kind, key string }

// objectSelector is a view whose selection is a cluster object (the views y and d work in).
type objectSelector interface {
	selectedObject(c *common) objectRef
}

// openObjectMsg opens the object page on ref; yaml false shows the description. parent is the tab it is under.
type openObjectMsg struct {
	ref    objectRef
	yaml   bool
	parent string
}

// openObject is y (yaml) or d: the object selected in the view on screen, when it has one.
func (m *Model) openObject(asYAML bool) tea.Cmd {
	sel, ok := m.current().(objectSelector)
	var ref objectRef
	if ok {
		ref = sel.selectedObject(m.shared())
	}
	if ref.key == "" {
		m.status = "y and d show the selected node, pod, quota or queue: nothing is selected here"
		return nil
	}
	m.outbox = append(m.outbox, openObjectMsg{ref: ref, yaml: asYAML, parent: m.tabInfos()[m.tabOf(m.view)].name}, show("Object"))
	return nil
}

type objectPage struct {
	page
	pager  viewport.Model
	ref    objectRef
	yaml   bool
	parent string
	text   string
	gen    uint64
	gone   bool
}

func newObjectPage(Options) view { return &objectPage{pager: newPager(), parent: "Nodes"} }

func (op *objectPage) info() viewInfo { return viewInfo{name: "Object", parent: op.parent} }

func (op *objectPage) update(c *common, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case openObjectMsg:
		op.ref, op.yaml, op.parent, op.text, op.gone = msg.ref, msg.yaml, msg.parent, "", false
		op.pager.GotoTop()
		op.load(c)
	case tea.KeyPressMsg:
		var cmd tea.Cmd
		op.pager, cmd = op.pager.Update(msg)
		return cmd
	}
	return nil
}

// setData redraws the object from the new data while the page is on screen.
func (op *objectPage) setData(c *common) {
	if op.ref.key != "" && c.focused(op) && c.data.Gen != op.gen {
		op.load(c)
	}
}

func (op *objectPage) wheel(_ *common, dir int) {
	if dir < 0 {
		op.pager.ScrollUp(wheelStep)
	} else {
		op.pager.ScrollDown(wheelStep)
	}
}

func (op *objectPage) layout(c *common) {
	op.pager.SetWidth(c.width)
	op.pager.SetHeight(max(c.bodyHeight()-1, 1))
}

// load reads the object from the world and renders it; a gone object keeps its last text.
func (op *objectPage) load(c *common) {
	op.gen = c.data.Gen
	objs, ok := c.world.object(op.ref.kind, op.ref.key)
	if !ok {
		op.gone = true
		if op.text == "" {
			op.text = fmt.Sprintf("%s %s is not in the cluster.", op.ref.kind, op.ref.key)
		}
	} else {
		op.gone = false
		if op.yaml {
			op.text = objectsYAML(objs)
		} else {
			op.text = describeObjects(objs)
		}
	}
	off := op.pager.YOffset()
	op.pager.SetContent(op.text)
	op.pager.SetYOffset(off)
}

func (op *objectPage) render(c *common, _ int) []string {
	s := c.styles
	what := "Describe"
	if op.yaml {
		what = "YAML"
	}
	title := s.title.Render(fmt.Sprintf("%s: %s %s", what, op.ref.kind, op.ref.key))
	if op.gone {
		title += " " + s.warn.Render("gone: deleted from the cluster; its last state below")
	} else {
		title += s.dim.Render(fmt.Sprintf("  (esc back · y yaml · d describe · ↑↓ ←→ scroll · %d%%)", int(op.pager.ScrollPercent()*100)))
	}
	return append([]string{title}, splitLines(op.pager.View())...)
}

// selectedObject: y and d again on the page switch between YAML and the description.
func (op *objectPage) selectedObject(*common) objectRef { return op.ref }

// objectsYAML is the objects as kubectl get -o yaml shows them, without managedFields; several are separated
// by "---".
func objectsYAML(objs []runtime.Object) string {
	var parts []string
	for _, o := range objs {
		if a, err := meta.Accessor(o); err == nil {
			a.SetManagedFields(nil)
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			parts = append(parts, "error: "+err.Error())
			continue
		}
		parts = append(parts, strings.TrimRight(string(b), "\n"))
	}
	return strings.Join(parts, "\n---\n")
}

// The views' selected objects (objectSelector).

func (v *nodesView) selectedObject(*common) objectRef { return objectRef{"Node", v.t.selectedKey()} }
func (v *nodeView) selectedObject(*common) objectRef  { return objectRef{"Node", v.detail} }
func (gp *gpuPage) selectedObject(*common) objectRef  { return objectRef{"Node", gp.node} }
func (v *pendingView) selectedObject(*common) objectRef {
	return objectRef{"Pod", v.t.selectedKey()}
}
func (vp *verdictPage) selectedObject(*common) objectRef { return objectRef{"Pod", vp.pod} }
func (v *podsView) selectedObject(*common) objectRef     { return objectRef{"Pod", v.t.selectedKey()} }
func (pp *podPage) selectedObject(*common) objectRef     { return objectRef{"Pod", pp.pod} }
func (v *quotasView) selectedObject(*common) objectRef {
	return objectRef{"ResourceQuota", v.t.selectedKey()}
}
func (v *queuesView) selectedObject(*common) objectRef { return objectRef{"Queue", v.t.selectedKey()} }
