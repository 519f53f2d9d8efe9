package tui

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/render"
)

// The what-if form's fields.
const (
	fieldGPUs = iota
	fieldMemory
	fieldCores
	fieldNamespace
	fieldCard
	fieldQueue
	fieldAnnotations
	fieldDevice
)

type formField struct {
	label, hint string
	input       textinput.Model
}

// whatIfForm asks for a hypothetical pod; the answer is recomputed on every change.
type whatIfForm struct {
	fields  []formField
	focused int
	editing bool
	answer  viewport.Model
	text    string // the answer, unwrapped
	last    string // the data generation and values the answer is for
	err     string
	running bool // an answer is being computed
	dirty   bool // and the values changed since it started
}

func newWhatIfForm(namespace string) whatIfForm {
	mk := func(label, value, hint string) formField {
		in := textinput.New()
		in.Prompt = ""
		in.SetWidth(20)
		in.SetValue(value)
		return formField{label: label, hint: hint, input: in}
	}
	return whatIfForm{
		fields: []formField{
			mk("GPUs", "1", "GPUs per pod"),
			mk("Memory", "8000", "MiB per GPU, or a percentage (50%); empty: HAMi's default"),
			mk("Cores", "30", "percent of each GPU's cores; empty: HAMi's default"),
			mk("Namespace", namespace, "its GPU quota applies"),
			mk("Card", "", "Volcano card model(s), preferred first: A|B (volcano.sh/card.name)"),
			mk("Queue", "", "Volcano queue whose card quota applies (scheduling.volcano.sh/queue-name)"),
			mk("Annotations", "", "k=v, comma separated (nvidia.com/use-gputype=A100)"),
			mk("Device", "", "another device type: dcu, mlu, ascend910b3, hygon ... (what-if --device); empty: NVIDIA GPUs"),
		},
		answer: newPager(),
	}
}

func (f *whatIfForm) focus() tea.Cmd {
	f.editing = true
	return f.fields[f.focused].input.Focus()
}

func (f *whatIfForm) blur() {
	f.editing = false
	f.fields[f.focused].input.Blur()
}

func (f *whatIfForm) move(delta int) tea.Cmd {
	f.fields[f.focused].input.Blur()
	f.focused = (f.focused + delta + len(f.fields)) % len(f.fields)
	return f.fields[f.focused].input.Focus()
}

// update passes non-key messages (cursor blinks) to the focused input.
func (f *whatIfForm) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	f.fields[f.focused].input, cmd = f.fields[f.focused].input.Update(msg)
	return cmd
}

func (f *whatIfForm) values() []string {
	out := make([]string, len(f.fields))
	for i := range f.fields {
		out[i] = strings.TrimSpace(f.fields[i].input.Value())
	}
	return out
}

// pod builds the hypothetical pod the way `kubectl hami what-if` does from its flags.
func (f *whatIfForm) pod(cfg engine.Config) (*corev1.Pod, error) {
	v := f.values()
	gpus, err := strconv.ParseInt(v[fieldGPUs], 10, 64)
	if err != nil || gpus < 1 {
		return nil, fmt.Errorf("GPUs %q: want a whole number, at least 1", v[fieldGPUs])
	}
	// The hypothetical pod is what-if's (query.WhatIfPod): the device type picks the resource names, kind 0
	// (NVIDIA) with the cluster's names.
	spec := query.WhatIfPod{Name: "what-if", Device: v[fieldDevice], Count: gpus, Cores: -1}
	if mem := v[fieldMemory]; mem != "" {
		if p, ok := strings.CutSuffix(mem, "%"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
			if err != nil || n < 1 || n > 100 {
				return nil, fmt.Errorf("memory %q: want a percentage from 1%% to 100%%", mem)
			}
			spec.MemoryPercent = n
		} else {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(strings.TrimSuffix(mem, "MiB")), " "), 10, 64)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("memory %q: want MiB above 0, or a percentage such as 50%%", mem)
			}
			spec.Memory = n
		}
	}
	if c := strings.TrimSuffix(v[fieldCores], "%"); c != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(c), 10, 64)
		if err != nil || n < 0 || n > 100 {
			return nil, fmt.Errorf("cores %q: want a percentage from 0 to 100", v[fieldCores])
		}
		spec.Cores = n
	}
	ns := v[fieldNamespace]
	if err := query.NamespaceNameError(ns); err != nil {
		return nil, err
	}
	annos := map[string]string{}
	for _, kv := range strings.Split(v[fieldAnnotations], ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, val, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("annotations %q: want key=value", kv)
		}
		annos[strings.TrimSpace(k)] = strings.TrimSpace(val)
	}
	if card := v[fieldCard]; card != "" {
		alts, err := codec.ParseCardName(card)
		if err != nil {
			return nil, fmt.Errorf("card %q: %w", card, err)
		}
		annos[codec.CardNameAnnotation] = strings.Join(alts, "|")
	}
	if q := v[fieldQueue]; q != "" {
		annos[codec.QueueNameAnnotation] = q
	}
	spec.Namespace, spec.Annotations = ns, annos
	pod, err := spec.Pod(cfg.Kinds())
	var fe *query.FieldError
	if errors.As(err, &fe) {
		if fe.Field == query.FieldDevice {
			return nil, fe.Err
		}
		return nil, fmt.Errorf("%s: %w", formFields[fe.Field], fe.Err)
	}
	return pod, err
}

// formFields name query.WhatIfPod's fields in the form's words.
var formFields = map[string]string{query.FieldMemory: "memory", query.FieldMemoryPercent: "memory", query.FieldCores: "cores"}

// formKey handles a key while the form is being edited.
func (v *whatIfView) formKey(c *common, msg tea.KeyPressMsg) tea.Cmd {
	f := &v.form
	var cmd tea.Cmd
	switch {
	case key.Matches(msg, c.keys.Back):
		f.blur()
		return nil
	case msg.String() == "enter":
		if f.focused == len(f.fields)-1 {
			f.blur()
			return nil
		}
		cmd = f.move(1)
	case key.Matches(msg, c.keys.NextField):
		cmd = f.move(1)
	case key.Matches(msg, c.keys.PrevField):
		cmd = f.move(-1)
	case key.Matches(msg, c.keys.PageUp, c.keys.PageDown):
		f.answer, cmd = f.answer.Update(msg)
	default:
		f.fields[f.focused].input, cmd = f.fields[f.focused].input.Update(msg)
		return tea.Batch(cmd, v.ask(c))
	}
	return cmd
}

// whatIfMsg is an answer computed off the UI goroutine (5,000 nodes take a noticeable moment).
type whatIfMsg struct {
	key    string
	answer whatIfAnswer
}

// ask starts answering for the form's values, unless that answer is shown already. One answer is
// computed at a time; keys typed meanwhile are answered together when it is done.
func (v *whatIfView) ask(c *common) tea.Cmd {
	f := &v.form
	key := fmt.Sprintf("%d\x00%s", c.data.Gen, strings.Join(f.values(), "\x00"))
	if key == f.last {
		return nil
	}
	if f.running {
		f.dirty = true
		return nil
	}
	f.last = key
	pod, err := f.pod(c.world.config())
	if err != nil {
		f.err = err.Error()
		f.text = c.styles.errText.Render(f.err)
		f.answer.SetContent(wrapProse(f.text, c.width))
		return nil
	}
	f.err = ""
	f.running = true
	w := c.world
	return func() tea.Msg { return whatIfMsg{key: key, answer: w.whatIf(pod)} }
}

// show renders an answer: where it lands, how many copies fit, and the what-if command's explanation.
func (v *whatIfView) show(c *common, msg whatIfMsg) tea.Cmd {
	f := &v.form
	f.running = false
	if msg.key == f.last {
		a := msg.answer
		var b strings.Builder
		s := c.styles
		v := a.Verdict
		for _, warn := range a.Warnings {
			fmt.Fprintf(&b, "%s\n", s.warn.Render("⚠ "+warn))
		}
		if a.Refusal != nil {
			fmt.Fprintf(&b, "%s %s\n", s.crit.Render("✗ HAMi's webhook would refuse to create it:"), a.Refusal)
		}
		switch {
		case v.NoGPURequest:
			b.WriteString(v.Summary + "\n")
		case v.Fits && v.Placement == nil:
			fmt.Fprintf(&b, "%s\n", s.ok.Render("✓ "+render.FitsLine(v)))
		case v.Fits:
			fmt.Fprintf(&b, "%s %s\n", s.ok.Render("✓ lands on "+v.Placement.Node), placementText(v.Placement))
		default:
			fmt.Fprintf(&b, "%s %s\n", s.crit.Render("✗ does not fit now:"), render.OneLine(v))
		}
		if !v.NoGPURequest {
			b.WriteString(s.bold.Render(copiesText(a.Capacity)) + "\n")
		}
		for _, ch := range a.Changes {
			fmt.Fprintf(&b, "HAMi's webhook would set: %s\n", ch)
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "What if %s/%s were created now?\n", a.Pod.Namespace, a.Pod.Name)
		if err := renderVerdict(&b, a.Input); err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		f.text = strings.TrimRight(b.String(), "\n")
		f.answer.SetContent(wrapProse(f.text, c.width))
		f.answer.GotoTop()
	}
	if f.dirty {
		f.dirty = false
		return v.ask(c)
	}
	return nil
}

// placementText lists the GPUs a placement takes: "GPU 0 (8000 MiB, 30%)".
func placementText(p *engine.Placement) string {
	var parts []string
	for _, c := range p.Containers {
		for _, d := range c.Devices {
			parts = append(parts, fmt.Sprintf("GPU %d (%d MiB, %d%%)", d.Index, d.MemMiB, d.Cores))
		}
	}
	return strings.Join(parts, ", ")
}

// copiesText says how many copies fit now and where, as the what-if command does.
func copiesText(cp engine.Capacity) string {
	if limit := render.CopiesLimit(cp); limit != "" {
		return render.Copies(cp) + ". " + limit
	}
	return render.Copies(cp) + "."
}

func (v *whatIfView) renderForm(c *common) []string {
	s := c.styles
	f := &v.form
	hint := "enter: edit the form · pgup/pgdn: scroll the answer"
	if f.editing {
		hint = "↑↓/tab: field · esc: done · pgup/pgdn: scroll the answer"
	}
	if f.running {
		hint = "answering… · " + hint
	}
	lines := []string{s.title.Render("What if a pod like this were created now?") + "  " + s.dim.Render(hint)}
	for i := range f.fields {
		fl := &f.fields[i]
		label := padRight(fl.label, 12)
		marker := "  "
		if f.editing && i == f.focused {
			marker = "▸ "
			label = s.selected.Render(label)
		}
		lines = append(lines, marker+label+" ["+padRight(fl.input.View(), 22)+"] "+s.dim.Render(fl.hint))
	}
	return append(lines, splitLines(f.answer.View())...)
}
