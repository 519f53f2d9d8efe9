package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/render"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/tui"
	"github.com/kubectl-hami/kubectl-hami/internal/usage"
)

// TopOptions are the inputs of `kubectl hami top`.
type TopOptions struct {
	readOptions

	Output    string
	Once      bool
	NoHeaders bool
	// AgentNamespace and AgentSelector find the node agents whose live GPU usage top shows (an empty selector:
	// none is read).
	AgentNamespace string
	AgentSelector  string
}

func newTopCommand(read *readFlags, streams genericiooptions.IOStreams, now func() time.Time) *cobra.Command {
	o := &TopOptions{readOptions: readOptions{read: read, streams: streams, now: now}}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Show GPU allocation per node, namespace GPU quotas and pending GPU pods",
		Long: `Show GPU allocation per node, namespace GPU quotas, Volcano queue card quotas and pending GPU pods.

In a terminal, top opens a live terminal UI (k9s keys: / filter, : jump, tab or ` + tui.ViewKeys() + ` views, enter drill down,
esc back, ? help, q quit) that follows the cluster through watches and never writes to it. When stdout is
not a terminal, with --once or with -o, it prints the tables once.

Nodes, their GPUs and the queues are shared by every namespace and always shown whole; -n NAMESPACE limits the
pending pods and the namespace quotas to that namespace (in the UI too), -A (the default) shows every namespace.
-o name prints the pending GPU pods as pod/NAME, for xargs.`,
		Example: `  kubectl hami top
  kubectl hami top --once -o wide
  kubectl hami top -n inference
  kubectl hami top --once -o name -n inference | xargs -n1 kubectl hami why-pending -n inference
  kubectl hami top --demo`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	read.addFlags(cmd)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: wide, name, json or yaml")
	read.addAllNamespacesFlag(cmd, "show the pending pods and quotas of every namespace (the default; wins over -n)")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "print the tables without the summary line, section titles and column headers")
	cmd.Flags().BoolVar(&o.Once, "once", false, "print the tables once instead of opening the terminal UI (what top does when stdout is not a terminal)")
	cmd.Flags().StringVar(&o.AgentNamespace, "agent-namespace", usage.DefaultNamespace, "namespace of the node agents (kubectl hami agent) whose live GPU usage top reads through the API server's pod proxy")
	cmd.Flags().StringVar(&o.AgentSelector, "agent-selector", usage.DefaultSelector, "label selector of the node agent pods; empty reads no live usage")
	return cmd
}

// Complete has nothing to fill: top reads its flags as they are.
func (o *TopOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks flag combinations.
func (o *TopOptions) Validate() error {
	if err := o.read.validate(); err != nil {
		return err
	}
	if o.AgentSelector != "" {
		if err := o.agents().Validate(); err != nil {
			return fmt.Errorf("--agent-selector: %w", err)
		}
	}
	return validateOutput(o.Output, "", "wide", "name", "json", "yaml")
}

// agents says where the node agents are; nil when live usage is not read.
func (o *TopOptions) agents() *usage.Options {
	if o.AgentSelector == "" {
		return nil
	}
	return &usage.Options{Namespace: o.AgentNamespace, Selector: o.AgentSelector}
}

// liveUsageDeadline bounds the whole reading of the agents for one-shot output: unreachable agents must not
// keep `top --once` waiting (each also has its own timeout).
const liveUsageDeadline = 15 * time.Second

// liveUsage reads the node agents of a live cluster once; nil for the demo, a snapshot, a cluster without agents,
// or agents that cannot be listed (a warning says why, unless the user may not list them: most may not read
// kube-system, and the tables are complete without live usage).
func (o *TopOptions) liveUsage(ctx context.Context) *usage.Result {
	ao := o.agents()
	if o.read.client == nil || ao == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, liveUsageDeadline)
	defer cancel()
	r, err := usage.Fetch(ctx, o.read.client, *ao)
	if err != nil {
		if !apierrors.IsForbidden(err) {
			fmt.Fprintf(o.streams.ErrOut, "warning: live GPU usage: %v\n", err)
		}
		return nil
	}
	if len(r.Agents) == 0 {
		return nil
	}
	return r
}

// Top is the -o json|yaml form.
type Top struct {
	APIVersion string `json:"apiVersion"` // kubectl-hami.io/v1alpha1
	Kind       string `json:"kind"`       // Top
	Source     string `json:"source"`     // where the cluster was read: the API server, a file or the demo
	// Notice says that HAMi has nothing to schedule here: no nodes, or no node registers devices HAMi reads.
	Notice string `json:"notice,omitempty"`
	// Namespace is the namespace that pending and quotas are limited to (-n); empty for every namespace.
	Namespace string `json:"namespace,omitempty"`
	// Nodes are every node with HAMi's view of its GPUs, by name.
	Nodes []*engine.Node `json:"nodes"`
	// Quotas are the namespace GPU quotas as HAMi accounts them, by namespace.
	Quotas []engine.QuotaStatus `json:"quotas"`
	// Queues are the Volcano queues with a card quota (volcano.sh/card.quota).
	Queues []engine.QueueUsage `json:"queues,omitempty"`
	// Pending are the GPU pods waiting for a node, with the one-line reason.
	Pending []PendingPod `json:"pending"`
	// Problems are the input problems found while reading the cluster (object, field, message).
	Problems []engine.Problem `json:"problems,omitempty"`
	// LiveUsage is what the node agents answered on GET /usage (live clusters with agents), or the demo's
	// simulated readings in the same form (liveUsage.simulated: true).
	LiveUsage *usage.Result `json:"liveUsage,omitempty"`
}

// PendingPod is a waiting GPU pod and the one-line reason.
type PendingPod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	GPUs      int    `json:"gpus"`    // GPUs the pod asks for, all containers
	Reason    string `json:"reason"`  // the REASON column: the gate ruling out the most nodes, with an example
	Summary   string `json:"summary"` // kube-scheduler's "0/N nodes are available: …" line
}

// Run prints the tables.
func (o *TopOptions) Run(ctx context.Context) error {
	if o.Output == "" && !o.Once && isTerminal(o.streams.Out) && o.read.live() {
		return o.runUIConnecting(ctx) // top_connect.go
	}
	s, err := o.read.load(ctx)
	if err != nil {
		return err
	}
	if err := checkNamespace(ctx, o.read, s, o.read.onlyNamespace(), o.streams.ErrOut); err != nil { // names.go
		return err
	}
	if o.Output == "" && !o.Once && isTerminal(o.streams.Out) {
		return o.runUI(ctx, s)
	}
	c, cfg := cluster(s, o.read, o.streams.ErrOut)
	only := o.read.onlyNamespace()
	rows := pendingRows(s, c, cfg, o.now())
	var quotaNS []string
	for _, ns := range c.QuotaNamespaces() {
		if only == "" || ns == only {
			quotaNS = append(quotaNS, ns)
		}
	}
	if only != "" {
		kept := rows[:0]
		for _, r := range rows {
			if r.Namespace == only {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	if o.Output == "name" {
		for _, r := range rows {
			fmt.Fprintf(o.streams.Out, "pod/%s\n", r.Name)
		}
		return nil
	}
	live := o.liveUsage(ctx)
	if live == nil && o.read.demo && o.Output != "" {
		// The demo has no agents: its readings are made up in their format and marked simulated, as in the UI;
		// the tables show them with -o wide (one row per GPU, beside the GPUS table), -o json|yaml always.
		nodes := make([]*engine.Node, 0, len(c.NodeNames()))
		for _, name := range c.NodeNames() {
			nodes = append(nodes, c.Node(name))
		}
		live = usage.Simulate(nodes, o.now())
	}
	if o.Output == "json" || o.Output == "yaml" {
		out := Top{APIVersion: APIVersion, Kind: "Top", Source: s.Source, Notice: query.NoDevicesNotice(c), Namespace: only, Problems: c.Problems(), Quotas: []engine.QuotaStatus{},
			Pending: []PendingPod{}, LiveUsage: live}
		for _, name := range c.NodeNames() {
			out.Nodes = append(out.Nodes, c.Node(name))
		}
		for _, ns := range quotaNS {
			out.Quotas = append(out.Quotas, c.Quota(ns))
		}
		out.Queues = c.QueueUsages()
		for _, r := range rows {
			out.Pending = append(out.Pending, PendingPod{Namespace: r.Namespace, Name: r.Name, GPUs: r.GPUs, Reason: r.Reason, Summary: r.Summary})
		}
		return printObject(o.streams.Out, o.Output, out)
	}
	w := o.streams.Out
	// title writes a section title (none with --no-headers: sections are then separated by a blank line only).
	title := func(format string, args ...any) {
		if !o.NoHeaders {
			fmt.Fprintf(w, format+"\n", args...)
		}
	}
	none := func() {
		if !o.NoHeaders {
			fmt.Fprintln(w, "none")
		}
	}
	tot := query.ClusterTotals(c)
	scope := ""
	if only != "" {
		scope = "   Namespace: " + only
	}
	if notice := query.NoDevicesNotice(c); notice != "" {
		title("%s", notice) // first, so that the empty tables below are not read as a quiet cluster
	}
	title("Source: %s   Nodes: %d   GPUs: %d   Pods on GPUs: %d   Pending GPU pods: %d%s\n",
		s.Source, tot.Nodes, tot.GPUs, tot.Pods, len(rows), scope)
	tw := w
	if o.NoHeaders {
		tw = render.NoHeaders(w)
	}
	title("NODES")
	if err := render.Nodes(tw, c); err != nil {
		return err
	}
	if o.Output == "wide" {
		fmt.Fprintln(w)
		title("GPUS")
		if err := render.GPUs(tw, c); err != nil {
			return err
		}
	}
	if live != nil {
		fmt.Fprintln(w)
		if live.Simulated {
			title("LIVE GPU USAGE (%s)", live.Summary())
		} else {
			title("LIVE GPU USAGE (node agents: %s)", live.Summary())
		}
		printLiveUsage(w, c, live, o.NoHeaders)
	}
	fmt.Fprintln(w)
	title("NAMESPACE QUOTAS (HAMi's accounting beside Kubernetes' ResourceQuota status)")
	if len(quotaNS) == 0 {
		none()
	} else {
		kube := query.KubeQuotaUsed(s.Quotas)
		if err := render.Quotas(tw, c, quotaNS, func(ns, res string) string { return kube[ns][res] }); err != nil {
			return err
		}
	}
	if c.Volcano() {
		fmt.Fprintln(w)
		title("QUEUE CARD QUOTAS (Volcano volcano.sh/card.quota, in whole cards)")
		if len(c.Queues()) == 0 {
			none()
		} else if err := render.Queues(tw, c); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	title("PENDING GPU PODS")
	if len(rows) == 0 {
		none()
		return nil
	}
	return render.Pending(tw, rows)
}

// runUI opens the terminal UI on the loaded snapshot; a live cluster stays live through informers.
func (o *TopOptions) runUI(ctx context.Context, s *snapshot.Snapshot) error {
	opts := tui.Options{Snapshot: s, DeviceConfigMap: o.read.deviceConfigMap, HAMiVersion: o.read.hamiVersion, Namespace: o.read.namespace(),
		OnlyNamespace: o.read.onlyNamespace(), Now: o.now,
		NoColor: tui.NoColorFromEnv(), Output: o.streams.Out, Agents: o.agents(), Simulate: o.read.demo}
	if o.read.client != nil {
		opts.Client, opts.Dynamic = o.read.watchClient, o.read.watchDynamic // informers: no request timeout
		if c := o.read.config.Context; c != nil && *c != "" {
			opts.Context = *c
		} else if raw, err := o.read.config.ToRawKubeConfigLoader().RawConfig(); err == nil {
			opts.Context = raw.CurrentContext
		}
		opts.User = o.kubeUser(opts.Context)
	}
	return tui.Run(ctx, opts)
}

// printLiveUsage is one line per GPU the agents measured, beside what HAMi allocated on it, and one per agent
// that did not answer.
func printLiveUsage(w io.Writer, c *engine.Cluster, live *usage.Result, noHeaders bool) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	if !noHeaders {
		fmt.Fprintln(tw, "NODE\tGPU\tUUID\tMEM USED (MiB)\tMEM TOTAL (MiB)\tUTIL\tALLOCATED (MiB)")
	}
	for _, a := range live.Agents {
		if a.Usage == nil {
			fmt.Fprintf(tw, "%s\t-\t-\tn/a\tn/a\tn/a\tagent %s: %s\n", a.Node, a.Pod, a.Error)
			continue
		}
		allocated := map[string]int64{}
		if n := c.Node(a.Node); n != nil {
			for _, g := range n.GPUs {
				allocated[g.UUID] = g.UsedMem
			}
		}
		gpus := usage.MapReport(a.Node, a.Usage)
		for _, g := range a.Usage.GPUs {
			alloc := "-"
			if v, ok := allocated[g.UUID]; ok {
				alloc = fmt.Sprint(v)
			}
			m, ok := gpus[g.UUID]
			if !ok {
				reason := g.Error
				if reason == "" {
					reason = "no UUID"
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\tn/a\tn/a\tn/a\t%s (%s)\n", a.Node, g.Index, g.UUID, alloc, reason)
				continue
			}
			util := "n/a"
			if m.Utilization >= 0 {
				util = fmt.Sprintf("%d%%", m.Utilization)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%s\t%s\n", a.Node, g.Index, g.UUID, m.UsedMiB, m.TotalMiB, util, alloc)
		}
	}
	_ = tw.Flush()
}

// isTerminal reports whether w is a terminal (the UI needs one; pipes and files get the tables).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// pendingRows evaluates every GPU pod that waits for a node.
func pendingRows(s *snapshot.Snapshot, c *engine.Cluster, cfg engine.Config, now time.Time) []render.PendingRow {
	var rows []render.PendingRow
	read := s.Pods.Reader() // every pod read into one object; a waiting GPU pod built as its own
	for i := range s.Pods.Len() {
		if _, ok := query.PendingGPU(read(i), cfg); !ok {
			continue
		}
		p := s.Pods.At(i)
		age := ""
		if !now.IsZero() && !p.CreationTimestamp.IsZero() {
			age = render.Age(now.Sub(p.CreationTimestamp.Time))
		}
		rows = append(rows, render.NewPendingRow(p.Namespace, p.Name, age, c.Evaluate(p, engine.EvalOptions{Now: now}), p.Status.NominatedNodeName))
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Namespace != rows[j].Namespace {
			return rows[i].Namespace < rows[j].Namespace
		}
		return rows[i].Name < rows[j].Name
	})
	return rows
}
