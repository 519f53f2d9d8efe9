package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/examples"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// newCompletionCommand is `kubectl hami completion bash|zsh|fish|powershell`. It replaces cobra's default
// completion command, whose help knows nothing of kubectl plugins.
func newCompletionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `Print a shell completion script for kubectl-hami.

For "kubectl hami <TAB>" (kubectl 1.26 and later), put the kubectl_complete-hami script of the release archive
(krew keeps it next to the binary, in $KREW_ROOT/store/hami/<version>/) in a directory on PATH and enable
kubectl's own completion; kubectl then asks kubectl-hami for commands, flags, pod names, namespaces, nodes and
contexts. The scripts printed here complete the binary called directly as kubectl-hami.`,
		Example: `  source <(kubectl hami completion bash)
  kubectl hami completion zsh > "${fpath[1]}/_kubectl-hami"
  kubectl hami completion fish > ~/.config/fish/completions/kubectl-hami.fish
  kubectl hami completion powershell | Out-String | Invoke-Expression`,
		Args:                  cobra.ExactArgs(1),
		ValidArgs:             []string{"bash", "zsh", "fish", "powershell"},
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, out := cmd.Root(), streams.Out
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(out)
			}
			return fmt.Errorf("unknown shell %q (want bash, zsh, fish or powershell)", args[0])
		},
	}
}

// registerCompletions wires the dynamic completions into the command tree built by newRoot: pod names for
// why-pending's argument, namespaces for -n, node names for --node, kubeconfig contexts, clusters and users,
// and the values of -o. Call it once every command is added.
func registerCompletions(root *cobra.Command, read *readFlags) {
	_ = root.RegisterFlagCompletionFunc("namespace", completeNamespaces(read))
	_ = root.RegisterFlagCompletionFunc("context", completeKubeconfig(read.config, "context"))
	_ = root.RegisterFlagCompletionFunc("cluster", completeKubeconfig(read.config, "cluster"))
	_ = root.RegisterFlagCompletionFunc("user", completeKubeconfig(read.config, "user"))
	for _, cmd := range root.Commands() {
		if cmd.Name() == "why-pending" {
			cmd.ValidArgsFunction = completePodNames(read)
		}
		if cmd.Flags().Lookup("node") != nil {
			_ = cmd.RegisterFlagCompletionFunc("node", completeNodeNames(read))
		}
		if cmd.Flags().Lookup("queue") != nil {
			_ = cmd.RegisterFlagCompletionFunc("queue", completeFromCluster(read, queueNames))
		}
		if cmd.Flags().Lookup("card") != nil {
			_ = cmd.RegisterFlagCompletionFunc("card", completeFromCluster(read, func(s *snapshot.Snapshot) []string {
				c, _ := cluster(s, read, io.Discard)
				return query.CardNames(c)
			}))
		}
		if f := cmd.Flags().Lookup("output"); f != nil {
			_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats(f.Usage), cobra.ShellCompDirectiveNoFileComp))
		}
		if cmd.Flags().Lookup("snapshot") != nil {
			_ = cmd.MarkFlagFilename("snapshot", "yaml", "yml", "json")
		}
	}
}

// outputFormats reads the formats a command accepts from its -o usage ("output format: wide, json or yaml").
func outputFormats(usage string) []string {
	_, list, ok := strings.Cut(usage, ":")
	if !ok {
		return nil
	}
	var out []string
	for _, w := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		if w != "or" && w != "" {
			out = append(out, w)
		}
	}
	return out
}

// completionTimeout bounds each API call of a completion: a TAB must not hang on an unreachable cluster.
const completionTimeout = 5 * time.Second

// completePodNames completes the POD argument (the first one only) with the pods of the -n namespace (every
// namespace with -A, the namespace then in the description), from --demo, --snapshot or the cluster. Pending
// pods come first, each with its phase as the description.
func completePodNames(read *readFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := completionContext(cmd)
		defer cancel()
		ns := read.namespace()
		if read.allNamespaces {
			ns = metav1.NamespaceAll // -A: every namespace's pods, each described with its namespace
		}
		type pod struct{ name, phase string }
		var pods []pod
		describe := func(namespace, phase string) string {
			if read.allNamespaces {
				return namespace + " · " + phase
			}
			return phase
		}
		if s, err := completionSnapshot(read); err != nil {
			return completionError(err)
		} else if s != nil {
			for p := range s.Pods.All() {
				if ns == metav1.NamespaceAll || p.Namespace == ns {
					pods = append(pods, pod{p.Name, describe(p.Namespace, string(p.Status.Phase))})
				}
			}
		} else {
			cs, err := completionClient(read.config)
			if err != nil {
				return completionError(err)
			}
			list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return completionError(err)
			}
			for _, p := range list.Items {
				pods = append(pods, pod{p.Name, describe(p.Namespace, string(p.Status.Phase))})
			}
		}
		sort.SliceStable(pods, func(i, j int) bool {
			pi, pj := strings.HasSuffix(pods[i].phase, "Pending"), strings.HasSuffix(pods[j].phase, "Pending")
			if pi != pj {
				return pi
			}
			return pods[i].name < pods[j].name
		})
		var out []cobra.Completion
		for _, p := range pods {
			if strings.HasPrefix(p.name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(p.name, p.phase))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// completeNamespaces completes -n with the cluster's namespaces, or those of the snapshot's pods and quotas.
func completeNamespaces(read *readFlags) cobra.CompletionFunc {
	return completeNames(read, namespaceNames, // names.go
		func(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
			list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return nil, err
			}
			out := make([]string, len(list.Items))
			for i, n := range list.Items {
				out[i] = n.Name
			}
			return out, nil
		})
}

// completeNodeNames completes --node with node names (GPU nodes of the snapshot or the cluster).
func completeNodeNames(read *readFlags) cobra.CompletionFunc {
	return completeNames(read, nodeNames, // names.go
		func(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
			list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return nil, err
			}
			out := make([]string, len(list.Items))
			for i, n := range list.Items {
				out[i] = n.Name
			}
			return out, nil
		})
}

// completeNames completes from the snapshot (--demo, --snapshot) when there is one, else from the cluster.
func completeNames(read *readFlags, fromSnapshot func(*snapshot.Snapshot) []string,
	fromCluster func(context.Context, kubernetes.Interface) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, cancel := completionContext(cmd)
		defer cancel()
		var names []string
		if s, err := completionSnapshot(read); err != nil {
			return completionError(err)
		} else if s != nil {
			names = fromSnapshot(s)
		} else {
			cs, err := completionClient(read.config)
			if err != nil {
				return completionError(err)
			}
			if names, err = fromCluster(ctx, cs); err != nil {
				return completionError(err)
			}
		}
		seen := make(map[string]bool, len(names))
		for _, n := range names {
			seen[n] = true
		}
		return filterSorted(seen, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFromCluster completes with names taken from the whole snapshot (names.go: the same lists the commands
// check typed names against): --demo, --snapshot, or the cluster read as the command would read it.
func completeFromCluster(read *readFlags, names func(*snapshot.Snapshot) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		s, err := completionSnapshot(read)
		if err == nil && s == nil {
			ctx, cancel := completionContext(cmd)
			defer cancel()
			s, err = read.load(ctx)
		}
		if err != nil {
			return completionError(err)
		}
		seen := map[string]bool{}
		for _, n := range names(s) {
			seen[n] = true
		}
		return filterSorted(seen, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeKubeconfig completes --context, --cluster or --user from the kubeconfig.
func completeKubeconfig(config *genericclioptions.ConfigFlags, what string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		raw, err := config.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return completionError(err)
		}
		seen := map[string]bool{}
		switch what {
		case "context":
			for name := range raw.Contexts {
				seen[name] = true
			}
		case "cluster":
			for name := range raw.Clusters {
				seen[name] = true
			}
		case "user":
			for name := range raw.AuthInfos {
				seen[name] = true
			}
		}
		return filterSorted(seen, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completionSnapshot is the --demo or --snapshot cluster, or nil for a live one.
func completionSnapshot(read *readFlags) (*snapshot.Snapshot, error) {
	switch {
	case read.demo:
		return snapshot.Parse(examples.DemoCluster, "demo-cluster.yaml (embedded)")
	case read.snapshotPath != "":
		return snapshot.LoadFile(read.snapshotPath)
	}
	return nil, nil
}

func completionClient(config *genericclioptions.ConfigFlags) (kubernetes.Interface, error) {
	rc, err := config.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	if rc.Timeout == 0 || rc.Timeout > completionTimeout {
		rc.Timeout = completionTimeout
	}
	return kubernetes.NewForConfig(rc)
}

func completionContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, completionTimeout)
}

// completionError offers nothing (and no file names); the reason shows with BASH_COMP_DEBUG_FILE set.
func completionError(err error) ([]cobra.Completion, cobra.ShellCompDirective) {
	cobra.CompDebugln("kubectl-hami completion: "+err.Error(), true)
	return nil, cobra.ShellCompDirectiveNoFileComp
}

func filterSorted(set map[string]bool, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for s := range set {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
