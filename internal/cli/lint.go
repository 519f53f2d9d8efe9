package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hami/kubectl-hami/internal/lint"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
)

// LintOptions are the inputs of `kubectl hami lint`.
type LintOptions struct {
	readOptions

	Output      string
	MinSeverity string
}

func newLintCommand(read *readFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &LintOptions{readOptions: readOptions{read: read, streams: streams}}
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Find silent misconfigurations of HAMi namespace quotas and Volcano card quotas",
		Long: `Find the misconfigurations that Kubernetes accepts and HAMi or Volcano's capacity-card plugin then ignores
or misreads without a word: an unreadable volcano.sh/card.quota (the plugin denies every card), card names no
node has, A|B alternatives of different resources, HAMi nodes whose split-count slots Volcano would count as
cards, queue quotas above the cluster's cards, pods and PodGroups naming missing queues, node card labels that
are incomplete, and ResourceQuota keys HAMi ignores (requests.nvidia.com/gpumem, misspelled resources).

Each finding names the object and the field and gives a fix. lint looks at the whole cluster; -n NAMESPACE
shows only the findings on that namespace's objects and on cluster-wide ones (nodes, queues), -A (the default)
every namespace. -o name prints the objects with findings as kind/name, one per line.

Exit status: 1 when at least one finding has severity error (or lint itself fails), 0 otherwise, so that
lint can gate a CI job or a GitOps check; warnings and infos alone exit 0.`,
		Example: `  kubectl hami lint
  kubectl hami lint --min-severity warning
  kubectl hami lint --snapshot cluster.yaml -o json
  kubectl hami lint --demo`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	read.addFlags(cmd)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: name, json or yaml")
	read.addAllNamespacesFlag(cmd, "show the findings of every namespace (the default; wins over -n)")
	cmd.Flags().StringVar(&o.MinSeverity, "min-severity", string(lint.Info), "show findings of this severity and worse: info, warning or error")
	_ = cmd.RegisterFlagCompletionFunc("min-severity", cobra.FixedCompletions([]string{"info", "warning", "error"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete has nothing to fill: lint reads its flags as they are.
func (o *LintOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks flag combinations.
func (o *LintOptions) Validate() error {
	if err := o.read.validate(); err != nil {
		return err
	}
	switch lint.Severity(o.MinSeverity) {
	case lint.Info, lint.Warning, lint.Error:
	default:
		return fmt.Errorf("--min-severity %q: want info, warning or error", o.MinSeverity)
	}
	return validateOutput(o.Output, "", "name", "json", "yaml")
}

// Lint is the -o json|yaml form.
type Lint struct {
	APIVersion string `json:"apiVersion"` // kubectl-hami.io/v1alpha1
	Kind       string `json:"kind"`       // Lint
	Source     string `json:"source"`     // where the cluster was read: the API server, a file or the demo
	// Notice says that HAMi has nothing to schedule here: no nodes, or no node registers devices HAMi reads
	// (lint then checks Volcano's card quotas and the ResourceQuotas only).
	Notice string `json:"notice,omitempty"`
	// Errors, Warnings and Infos count the findings shown (after --min-severity).
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
	// Findings are the misconfigurations found, each with its object, field, problem and fix.
	Findings []lint.Finding `json:"findings"`
}

// errLintFailed is returned when an error-severity finding exists: the command exits 1.
type errLintFailed struct{ errors int }

func (e errLintFailed) Error() string {
	return fmt.Sprintf("lint found %d %s", e.errors, plural(e.errors, "error", "errors"))
}

// Run lints the cluster and prints the findings.
func (o *LintOptions) Run(ctx context.Context) error {
	s, err := o.read.load(ctx)
	if err != nil {
		return err
	}
	if err := checkNamespace(ctx, o.read, s, o.read.onlyNamespace(), o.streams.ErrOut); err != nil { // names.go
		return err
	}
	// The engine's input problems are findings of their own here, so they are not printed twice as warnings.
	c, cfg := cluster(s, o.read, io.Discard)
	all := lint.Run(s, c, cfg)
	if ns := o.read.onlyNamespace(); ns != "" {
		all = filterNamespace(all, ns)
	}
	errs, _, _ := lint.Count(all)
	shown := filterSeverity(all, lint.Severity(o.MinSeverity))
	notice := query.NoDevicesNotice(c)
	if o.Output == "name" {
		printFindingNames(o.streams.Out, shown)
	} else if o.Output == "json" || o.Output == "yaml" {
		out := Lint{APIVersion: APIVersion, Kind: "Lint", Source: s.Source, Notice: notice, Findings: shown}
		if out.Findings == nil {
			out.Findings = []lint.Finding{}
		}
		out.Errors, out.Warnings, out.Infos = lint.Count(shown)
		if err := printObject(o.streams.Out, o.Output, out); err != nil {
			return err
		}
	} else if err := printFindings(o.streams.Out, s.Source, notice, shown, len(all)-len(shown), o.MinSeverity); err != nil {
		return err
	}
	if errs > 0 {
		return errLintFailed{errors: errs}
	}
	return nil
}

// filterNamespace keeps the findings on objects of namespace ns and on cluster-scoped objects.
func filterNamespace(fs []lint.Finding, ns string) []lint.Finding {
	var out []lint.Finding
	for _, f := range fs {
		if f.Object.Namespace == "" || f.Object.Namespace == ns {
			out = append(out, f)
		}
	}
	return out
}

// printFindingNames is -o name: each object with a finding once, as kind/name (kubectl's lower-case kind).
func printFindingNames(w io.Writer, fs []lint.Finding) {
	seen := map[string]bool{}
	for _, f := range fs {
		name := strings.ToLower(f.Object.Kind) + "/" + f.Object.Name
		if !seen[name] {
			seen[name] = true
			fmt.Fprintln(w, name)
		}
	}
}

// filterSeverity keeps findings of at least the given severity.
func filterSeverity(fs []lint.Finding, min lint.Severity) []lint.Finding {
	rank := map[lint.Severity]int{lint.Error: 0, lint.Warning: 1, lint.Info: 2}
	var out []lint.Finding
	for _, f := range fs {
		if rank[f.Severity] <= rank[min] {
			out = append(out, f)
		}
	}
	return out
}

// printFindings writes one block per finding: a header line with the severity, the object, the field and
// the check, then the problem and the fix, indented so that commands in fixes can be copied whole.
func printFindings(w io.Writer, source, notice string, fs []lint.Finding, hidden int, minSeverity string) error {
	if notice != "" { // first: "No problems found" in a cluster without HAMi is no good news
		if _, err := fmt.Fprintln(w, notice); err != nil {
			return err
		}
	}
	e, wa, in := lint.Count(fs)
	more := ""
	if hidden > 0 {
		more = fmt.Sprintf(" (%d less severe hidden by --min-severity %s)", hidden, minSeverity)
	}
	if len(fs) == 0 {
		_, err := fmt.Fprintf(w, "Source: %s\nNo problems found%s.\n", source, more)
		return err
	}
	if _, err := fmt.Fprintf(w, "Source: %s   Findings: %d %s, %d %s, %d info%s\n", source,
		e, plural(e, "error", "errors"), wa, plural(wa, "warning", "warnings"), in, more); err != nil {
		return err
	}
	for _, f := range fs {
		obj := f.Object.Kind + " " + f.Object.Name
		if f.Object.Namespace != "" {
			obj = f.Object.Kind + " " + f.Object.Namespace + "/" + f.Object.Name
		}
		if _, err := fmt.Fprintf(w, "\n%-7s  %s  %s  (%s)\n  problem: %s\n  fix:     %s\n",
			strings.ToUpper(string(f.Severity)), obj, f.Field, f.Check, f.Message, f.Fix); err != nil {
			return err
		}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
