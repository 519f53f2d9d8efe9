package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/engine/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/render"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/tui"
)

// TopOptions are the inputs of `kubectl hami top`.
type TopOptions struct {
	read    *readFlags
	streams genericiooptions.IOStreams
	now     func() time.Time

	Output string
	Once   bool
}

func newTopCommand(read *readFlags, streams genericiooptions.IOStreams, now func() time.Time) *cobra.Command {
	o := &TopOptions{read: read, streams: streams, now: now}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Show GPU allocation per node, namespace GPU quotas and pending GPU pods",
		Long: `Show GPU allocation per node, namespace GPU quotas, Volcano queue card quotas and pending GPU pods.

In a terminal, top opens a live terminal UI (k9s keys: / filter, : jump, tab or 1-6 views, enter drill down,
esc back, ? help, q quit) that follows the cluster through watches and never writes to it. When stdout is
not a terminal, with --once or with -o, it prints the tables once.`,
		Example: `  kubectl hami top
  kubectl hami top --once -o wide
  kubectl hami top --demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	read.addFlags(cmd)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: wide, json or yaml")
	cmd.Flags().BoolVar(&o.Once, "once", false, "print the tables once instead of opening the terminal UI (what top does when stdout is not a terminal)")
	return cmd
}

// Validate checks flag combinations.
func (o *TopOptions) Validate() error {
	if err := o.read.validate(); err != nil {
		return err
	}
	return validateOutput(o.Output, "", "wide", "json", "yaml")
}

// Top is the -o json|yaml form.
type Top struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Source     string               `json:"source"`
	Nodes      []*engine.Node       `json:"nodes"`
	Quotas     []engine.QuotaStatus `json:"quotas"`
	Queues     []engine.QueueUsage  `json:"queues,omitempty"`
	Pending    []PendingPod         `json:"pending"`
	Problems   []engine.Problem     `json:"problems,omitempty"`
}

// PendingPod is a waiting GPU pod and the one-line reason.
type PendingPod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	GPUs      int    `json:"gpus"`
	Reason    string `json:"reason"`
	Summary   string `json:"summary"`
}

// Run prints the tables.
func (o *TopOptions) Run(ctx context.Context) error {
	s, err := o.read.load(ctx)
	if err != nil {
		return err
	}
	if o.Output == "" && !o.Once && isTerminal(o.streams.Out) {
		return o.runUI(ctx, s)
	}
	c, cfg := cluster(s, o.read.deviceConfigMap, o.streams.ErrOut)
	rows := pendingRows(s, c, cfg, o.now())
	if o.Output == "json" || o.Output == "yaml" {
		out := Top{APIVersion: APIVersion, Kind: "Top", Source: s.Source, Problems: c.Problems(), Quotas: []engine.QuotaStatus{}, Pending: []PendingPod{}}
		for _, name := range c.NodeNames() {
			out.Nodes = append(out.Nodes, c.Node(name))
		}
		for _, ns := range c.QuotaNamespaces() {
			out.Quotas = append(out.Quotas, c.Quota(ns))
		}
		out.Queues = c.QueueUsages()
		for _, r := range rows {
			out.Pending = append(out.Pending, PendingPod{Namespace: r.Namespace, Name: r.Name, GPUs: r.Verdict.Request.TotalGPUs(),
				Reason: render.OneLine(r.Verdict), Summary: r.Verdict.Summary})
		}
		return printObject(o.streams.Out, o.Output, out)
	}
	w := o.streams.Out
	gpus, pods := 0, 0
	for _, name := range c.NodeNames() {
		gpus += len(c.Node(name).GPUs)
		pods += len(c.PodsOn(name))
	}
	fmt.Fprintf(w, "Source: %s   Nodes: %d   GPUs: %d   Pods on GPUs: %d   Pending GPU pods: %d\n\n",
		s.Source, len(c.NodeNames()), gpus, pods, len(rows))
	fmt.Fprintln(w, "NODES")
	if err := render.Nodes(w, c); err != nil {
		return err
	}
	if o.Output == "wide" {
		fmt.Fprintln(w, "\nGPUS")
		if err := render.GPUs(w, c); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\nNAMESPACE QUOTAS (HAMi's accounting beside Kubernetes' ResourceQuota status)")
	if len(c.QuotaNamespaces()) == 0 {
		fmt.Fprintln(w, "none")
	} else if err := render.Quotas(w, c, func(ns, res string) string { return kubeQuotaUsed(s, ns)[res] }); err != nil {
		return err
	}
	if c.Volcano() {
		fmt.Fprintln(w, "\nQUEUE CARD QUOTAS (Volcano volcano.sh/card.quota, in whole cards)")
		if len(c.Queues()) == 0 {
			fmt.Fprintln(w, "none")
		} else if err := render.Queues(w, c); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\nPENDING GPU PODS")
	if len(rows) == 0 {
		fmt.Fprintln(w, "none")
		return nil
	}
	return render.Pending(w, rows)
}

// runUI opens the terminal UI on the loaded snapshot; a live cluster stays live through informers.
func (o *TopOptions) runUI(ctx context.Context, s *snapshot.Snapshot) error {
	opts := tui.Options{Snapshot: s, DeviceConfigMap: o.read.deviceConfigMap, Namespace: o.read.namespace(), Now: o.now,
		NoColor: tui.NoColorFromEnv(), Output: o.streams.Out}
	if o.read.client != nil {
		opts.Client, opts.Dynamic = o.read.client, o.read.dynamic
		if c := o.read.config.Context; c != nil && *c != "" {
			opts.Context = *c
		} else if raw, err := o.read.config.ToRawKubeConfigLoader().RawConfig(); err == nil {
			opts.Context = raw.CurrentContext
		}
	}
	return tui.Run(ctx, opts)
}

// isTerminal reports whether w is a terminal (the UI needs one; pipes and files get the tables).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// pendingRows evaluates every GPU pod that waits for a node.
func pendingRows(s *snapshot.Snapshot, c *engine.Cluster, cfg engine.Config, now time.Time) []render.PendingRow {
	var rows []render.PendingRow
	for _, p := range s.Pods {
		if p.Spec.NodeName != "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
			continue
		}
		if req, _ := engine.ParseRequest(p, cfg); !req.WantsGPU() && p.Annotations[codec.CardNameAnnotation] == "" {
			continue
		}
		age := ""
		if !now.IsZero() && !p.CreationTimestamp.IsZero() {
			age = render.Age(now.Sub(p.CreationTimestamp.Time))
		}
		rows = append(rows, render.PendingRow{Namespace: p.Namespace, Name: p.Name, Age: age, Verdict: c.Evaluate(p, engine.EvalOptions{Now: now})})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Namespace != rows[j].Namespace {
			return rows[i].Namespace < rows[j].Namespace
		}
		return rows[i].Name < rows[j].Name
	})
	return rows
}
