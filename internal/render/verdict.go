package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
)

// VerdictInput is everything the why-pending and what-if explanation shows besides the verdict itself.
type VerdictInput struct {
	Verdict *engine.Verdict
	// Kube holds the standard node constraints kube-scheduler checks before HAMi (nil: not checked).
	Kube []kubefit.NodeResult
	// KubeQuotaUsed is what Kubernetes' own ResourceQuota status says is used, keyed by resource name.
	KubeQuotaUsed map[string]string
	Events        []*corev1.Event
	Now           time.Time
	// Wide adds the per-node table; Nodes adds the per-GPU gate table of those nodes.
	Wide  bool
	Nodes []string
	// Waiting says why a pod that fits may still be Pending (query.WhyWaiting); nil for none.
	Waiting []string
}

// waiting writes why a pod that fits is still Pending.
func waiting(p *printer, lines []string) {
	if len(lines) == 0 {
		return
	}
	p.blank()
	p.line("Why it may still be Pending:")
	for _, l := range lines {
		p.line("  - %s", l)
	}
}

// Verdict writes the explanation of a verdict: summary, gate table, quota, hints, per-node and per-GPU
// detail when asked, and recent scheduling events.
func Verdict(w io.Writer, in VerdictInput) error {
	v := in.Verdict
	p := &printer{w: w}
	if v.NoGPURequest && v.Card == nil {
		p.line("%s", v.Summary)
		waiting(p, in.Waiting)
		return p.err
	}
	if v.NoGPURequest {
		return cardOnly(p, in)
	}
	p.line("%s", v.Summary)
	if v.NotHAMi {
		return otherScheduler(p, in)
	}
	// kube-scheduler's own checks are gates of the verdict: the summary above counts them; -o wide lists
	// every one a node fails.
	p.blank()
	p.line("Requests:")
	for _, c := range v.Request.Containers {
		kind := "container"
		if c.Init {
			kind = "init container"
		}
		p.line("  %s %s: %d %s(s)%s, each %s, %s", kind, c.Name, c.Count, wordOf(c.Word), deviceOf(c), c.MemoryString(), c.CoresString())
	}
	switch {
	case v.Fits && v.Placement == nil:
		p.blank()
		p.line("%s", FitsLine(v))
		waiting(p, in.Waiting)
	case v.Fits:
		p.blank()
		p.line("Placement on %s:", v.Placement.Node)
		t := NewTable(p, "  CONTAINER", "GPU", "UUID", "TYPE", "MEMORY", "CORES")
		for _, c := range v.Placement.Containers {
			for _, d := range c.Devices {
				mem := fmt.Sprintf("%d MiB", d.MemMiB)
				if d.MigProfile != "" {
					mem += " (MIG " + d.MigProfile + ")"
				}
				t.Row("  "+c.Name, fmt.Sprint(d.Index), d.UUID, d.Type, mem, fmt.Sprintf("%d%%", d.Cores))
			}
		}
		p.flush(t)
		waiting(p, in.Waiting)
	default:
		reasonTable(p, v, "GATE")
		why(p, v)
	}
	quota(p, v.Quota, in.KubeQuotaUsed)
	cardQuota(p, v)
	fixes(p, v)
	if in.Wide {
		nodeTable(p, v, in.Kube)
	}
	for _, name := range in.Nodes {
		gpuTable(p, v, name)
	}
	problems(p, v)
	events(p, in.Events, in.Now)
	return p.err
}

// example is one node's numbers for a code (engine's Verdict.NodeWith): a node-level check shows the node
// closest to passing (the most GPUs for the count gate), as the Why sentence does; a GPU-level code the first
// node's best GPU.
func example(v *engine.Verdict, code engine.Code) string {
	ns := v.NodeWith(code)
	switch {
	case ns == nil:
		return ""
	case ns.Check != nil:
		return ns.Node + ": " + CheckText(*ns.Check)
	case ns.Example != nil:
		return fmt.Sprintf("%s %s %d: %s", ns.Node, v.Request.DeviceWord(), ns.Example.Index, CheckText(ns.Example.Result))
	}
	return ns.Node + ": " + ns.Reason
}

// CheckText says what a gate found, with its numbers.
func CheckText(c engine.Check) string {
	switch c.Gate {
	case "memory", "cores":
		return fmt.Sprintf("needs %d %s, %d of %d %s free", c.Need, c.Unit, c.Have, c.Total, c.Unit)
	case "slots":
		return fmt.Sprintf("%d of %d slots free", c.Have, c.Total)
	case "quota":
		return fmt.Sprintf("pod needs %d %s, %d of %d %s left (%s)", c.Need, c.Unit, c.Have, c.Total, c.Unit, c.Detail)
	case "device-count", "numa", "set":
		return fmt.Sprintf("needs %d %s, %d available", c.Need, orWord(c.Unit, "GPUs"), c.Have)
	case "compute":
		return fmt.Sprintf("%d%% of %d%% cores free; %s", c.Have, c.Total, c.Detail)
	case "mig":
		return fmt.Sprintf("needs a profile of %d MiB: %s", c.Need, c.Detail)
	case "fit":
		return "fits"
	}
	if c.Detail != "" {
		return c.Detail
	}
	return string(c.Code)
}

func quota(p *printer, q engine.QuotaStatus, kubeUsed map[string]string) {
	if !q.Limited() {
		return
	}
	p.blank()
	p.line("Namespace quota (%s), as HAMi accounts it:", q.Namespace)
	t := NewTable(p, "  RESOURCE", "USED", "LIMIT", "FREE", "RESOURCEQUOTA", "KUBERNETES STATUS")
	for _, l := range QuotaLines(q) {
		if l == nil {
			continue
		}
		k := kubeUsed[l.Resource]
		if k == "" {
			k = "-"
		}
		t.Row("  "+l.Resource, fmt.Sprintf("%d %s", l.Used, l.Unit), fmt.Sprintf("%d %s", l.Limit, l.Unit), fmt.Sprintf("%d %s", l.Free(), l.Unit), l.Source, k)
	}
	p.flush(t)
}

func nodeTable(p *printer, v *engine.Verdict, kube []kubefit.NodeResult) {
	kubeBy := map[string][]kubefit.Failure{}
	for _, r := range kube {
		kubeBy[r.Node] = r.Failures
	}
	p.blank()
	p.line("Nodes:")
	// REASON is the verdict's: the first kube-scheduler check the node fails, else HAMi's FailedNodes text;
	// EVERY KUBE CHECK lists each kube-scheduler check the node fails (kube-scheduler stops at the first).
	t := NewTable(p, "  NODE", "FITS", "CONTAINER", "REASON", "EVERY KUBE CHECK")
	for _, ns := range v.Nodes() {
		fits, reason := "no", ns.Reason
		if ns.Fits {
			fits, reason = "yes", fmt.Sprintf("score %.2f", ns.Score)
		}
		var k []string
		for _, f := range kubeBy[ns.Node] {
			k = append(k, f.Reason)
		}
		ks := strings.Join(k, "; ")
		if ks == "" {
			ks = "-"
		}
		cont := ns.Container
		if cont == "" {
			cont = "-"
		}
		t.Row("  "+ns.Node, fits, cont, reason, ks)
	}
	p.flush(t)
}

func gpuTable(p *printer, v *engine.Verdict, node string) {
	ns := v.NodeStatus(node)
	p.blank()
	if ns == nil {
		p.line("Node %s: not in the cluster.", node)
		return
	}
	if ns.Check != nil {
		p.line("Node %s: %s: %s", node, ns.Code, CheckText(*ns.Check))
		return
	}
	p.line("Node %s, GPU by GPU (container %s):", node, orDash(ns.Container))
	t := NewTable(p, "  GPU", "UUID", "TYPE", "NUMA", "RESULT", "ALSO FAILS")
	for _, g := range ns.GPUs {
		result := "fits"
		if g.Selected {
			result = "selected"
		}
		if g.Result.Failed() {
			result = string(g.Result.Code) + ": " + CheckText(g.Result)
		} else if g.Other() {
			result = "-: " + g.Result.Detail
		}
		// Every later gate this GPU fails too: what else would have to change for it to fit.
		var also []string
		for _, c := range g.Checks {
			if c.Failed() && c.Gate != g.Result.Gate {
				also = append(also, c.Gate)
			}
		}
		t.Row("  "+fmt.Sprint(g.Index), g.UUID, g.Type, fmt.Sprint(g.Numa), result, orDash(strings.Join(also, ", ")))
	}
	p.flush(t)
}

func events(p *printer, evs []*corev1.Event, now time.Time) {
	var shown []*corev1.Event
	for _, e := range evs {
		if e.Reason == "FailedScheduling" || e.Reason == "FilteringFailed" || e.Type == corev1.EventTypeWarning {
			shown = append(shown, e)
		}
	}
	if len(shown) == 0 {
		return
	}
	sort.SliceStable(shown, func(i, j int) bool { return query.EventTime(shown[i]).Before(query.EventTime(shown[j])) })
	if len(shown) > 5 {
		shown = shown[len(shown)-5:]
	}
	p.blank()
	p.line("Recent events:")
	t := NewTable(p, "  LAST SEEN", "REASON", "FROM", "COUNT", "MESSAGE")
	for _, e := range shown {
		age := "-"
		if t := query.EventTime(e); !now.IsZero() && !t.IsZero() {
			age = Age(now.Sub(t))
		}
		from := e.Source.Component
		if from == "" {
			from = e.ReportingController
		}
		t.Row("  "+age, e.Reason, orDash(from), fmt.Sprint(max(e.Count, 1)), strings.ReplaceAll(e.Message, "\n", " "))
	}
	p.flush(t)
}

// Age is kubectl's short duration: 45s, 12m, 3h, 2d.
func Age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printer writes lines and remembers the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) Write(b []byte) (int, error) {
	if p.err != nil {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	p.err = err
	return n, err
}

func (p *printer) line(format string, args ...any) { fmt.Fprintf(p, format+"\n", args...) }
func (p *printer) blank()                          { fmt.Fprintln(p) }
func (p *printer) flush(t *Table) {
	if err := t.Flush(); err != nil && p.err == nil {
		p.err = err
	}
}

// otherScheduler explains a verdict of a pod that another scheduler than HAMi's profile decides: its standard
// checks per node, the queue's card quota for Volcano, and the routing fix when the pod asks for HAMi's
// resources.
func otherScheduler(p *printer, in VerdictInput) error {
	v := in.Verdict
	p.line("Decided by %s, not HAMi's profile: kube-scheduler's standard checks on the nodes' allocatable%s.", v.Scheduler,
		map[bool]string{true: " and the Volcano queue's card quota", false: ""}[v.Card != nil])
	if len(v.Reasons) > 0 {
		reasonTable(p, v, "CHECK")
	}
	why(p, v)
	if v.Fits {
		waiting(p, in.Waiting)
	}
	cardQuota(p, v)
	hints(p, v)
	if in.Wide {
		nodeTable(p, v, in.Kube)
	}
	problems(p, v)
	events(p, in.Events, in.Now)
	return p.err
}

// hints writes the verdict's hints as "What would make it fit", for verdicts without proven fixes.
func hints(p *printer, v *engine.Verdict) {
	if len(v.Hints) > 0 {
		p.blank()
		p.line("What would make it fit:")
		for _, h := range v.Hints {
			p.line("  - %s", h)
		}
	}
}

// problems writes the input problems of the pod itself (field and message).
func problems(p *printer, v *engine.Verdict) {
	if len(v.Problems) > 0 {
		p.blank()
		p.line("Problems with this pod:")
		for _, pr := range v.Problems {
			p.line("  - %s: %s", pr.Field, pr.Message)
		}
	}
}

// fixes writes "What would make it fit": the changes the engine proved first (each evaluated on a copy of the
// world: sufficient, or not enough and what blocks next), then the hints it could not turn into a change.
func fixes(p *printer, v *engine.Verdict) {
	if len(v.Fixes) == 0 && len(v.Hints) == 0 {
		return
	}
	p.blank()
	p.line("What would make it fit:")
	for _, f := range v.Fixes {
		if f.Sufficient {
			p.line("  - %s", f.Text())
		}
	}
	for _, f := range v.Fixes {
		if !f.Sufficient {
			p.line("  - %s", f.Text())
		}
	}
	for _, h := range v.Hints {
		p.line("  - %s", h)
	}
}

// reasonTable is the summary's codes, one row each with the number of nodes and one example.
func reasonTable(p *printer, v *engine.Verdict, codeHeader string) {
	p.blank()
	t := NewTable(p, codeHeader, "NODES", "EXAMPLE")
	for _, r := range v.Reasons {
		t.Row(string(r.Code), fmt.Sprint(r.Nodes), example(v, r.Code))
	}
	p.flush(t)
}

// why lists the verdict's explanation lines.
func why(p *printer, v *engine.Verdict) {
	if len(v.Explanation) == 0 {
		return
	}
	p.blank()
	p.line("Why:")
	for _, e := range v.Explanation {
		p.line("  %s", e)
	}
}

// wordOf is what people call a requested device: GPU, or the type's word (NPU, DCU ...).
func wordOf(w string) string { return orWord(w, "GPU") }

func orWord(w, def string) string {
	if w == "" {
		return def
	}
	return w
}

// deviceOf names the device type and vNPU template of a request for another type than NVIDIA's.
func deviceOf(c engine.ContainerRequest) string {
	switch {
	case c.Device == "":
		return ""
	case c.Template != "":
		return " of type " + c.Device + " (vNPU template " + c.Template + ")"
	}
	return " of type " + c.Device
}
